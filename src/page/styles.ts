/** The pages' stylesheet (inline with the CSP nonce: one request per page, nothing to cache-bust). */
export const PAGE_CSS = `
*,*::before,*::after{box-sizing:border-box}
:root{--ink:#172033;--muted:#5f6b80;--line:#dfe3ea;--bg:#f3f5f9;--card:#fff;--accent:#2f5bea;--accent-ink:#fff;--bad:#c73636;--ok:#1a8d55;--radius:14px}
html{-webkit-text-size-adjust:100%}
body{margin:0;font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
.wrap{max-width:460px;margin:0 auto;padding:20px 16px 32px}
.muted{color:var(--muted)}.small{font-size:13px}.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
.merchant{display:flex;align-items:center;gap:12px;margin:4px 0 16px}
.logo{width:40px;height:40px;border-radius:10px;background:var(--accent);color:#fff;display:grid;place-items:center;font-weight:700;font-size:18px;flex:none}
.who{flex:1;min-width:0}.shop{font-weight:600;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.lang{font-size:13px;color:var(--accent);text-decoration:none;padding:6px 8px;border-radius:8px}
.lang:hover,.lang:focus-visible{background:#e7ecfd}
.summary{background:var(--card);border-radius:var(--radius);padding:20px;box-shadow:0 1px 2px rgba(20,30,60,.06);margin-bottom:12px}
h1{font-size:20px;line-height:1.3;margin:0 0 4px;word-wrap:break-word}
.desc{margin:0 0 12px;color:var(--muted);word-wrap:break-word}
.total{margin-top:10px}
.sum{font-size:34px;font-weight:700;letter-spacing:-.5px;line-height:1.15}.sum .cur{font-size:20px;color:var(--muted);font-weight:600}
.rows{margin:14px 0 0;padding:12px 0 0;border-top:1px dashed var(--line)}
.row{display:flex;justify-content:space-between;gap:12px;padding:3px 0}.row dt{color:var(--muted)}.row dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
.row.strong dd{font-weight:700}
.card{background:var(--card);border-radius:var(--radius);padding:20px;box-shadow:0 1px 2px rgba(20,30,60,.06)}
fieldset.methods{border:0;margin:0;padding:0;min-width:0}
legend{padding:0;margin-bottom:8px}
.tab-input{position:absolute;opacity:0;width:1px;height:1px;pointer-events:none}
.tabs{display:grid;grid-template-columns:1fr 1fr;background:var(--bg);border-radius:10px;padding:4px;margin-bottom:18px}
.tabs label{text-align:center;padding:10px 6px;border-radius:8px;cursor:pointer;font-weight:600;color:var(--muted);font-size:15px}
#tab-card:checked~.tabs label[for=tab-card],#tab-sbp:checked~.tabs label[for=tab-sbp]{background:var(--card);color:var(--ink);box-shadow:0 1px 3px rgba(20,30,60,.12)}
#tab-card:focus-visible~.tabs label[for=tab-card],#tab-sbp:focus-visible~.tabs label[for=tab-sbp]{outline:2px solid var(--accent);outline-offset:2px}
#tab-card:checked~#panel-sbp,#tab-sbp:checked~#panel-card{display:none}
.field{margin-bottom:14px}
label{display:block;font-size:14px;font-weight:600;margin-bottom:6px}
input[type=text],input[type=password]{width:100%;font:inherit;font-size:17px;padding:12px 14px;border:1px solid var(--line);border-radius:10px;background:#fff;color:var(--ink);letter-spacing:.5px}
input:focus{outline:none;border-color:var(--accent);box-shadow:0 0 0 3px rgba(47,91,234,.18)}
input[aria-invalid=true]{border-color:var(--bad)}
.two{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.err{color:var(--bad);font-size:13px;margin:6px 0 0}
.test-banner{background:#fff3cd;color:#6b4b00;border:1px dashed #d9a400;border-radius:10px;padding:8px 12px;margin:0 0 12px;font-size:14px;font-weight:600;text-align:center}
.fail-back{margin-top:12px}
.notice{background:#eef1fb;border-radius:10px;padding:10px 12px;margin:0 0 14px;font-size:14px}.notice.bad{background:#fdecec;color:#8e1f1f}
.btn{display:block;width:100%;text-align:center;text-decoration:none;font:inherit;font-weight:700;font-size:17px;padding:14px 16px;border:0;border-radius:12px;background:var(--accent);color:var(--accent-ink);cursor:pointer;margin-top:6px}
.btn:hover{filter:brightness(1.06)}.btn:focus-visible{outline:3px solid rgba(47,91,234,.4);outline-offset:2px}
.btn[disabled]{opacity:.7;cursor:progress}
.btn.secondary{background:#e7ecfd;color:var(--accent)}
.hint{color:var(--muted);margin:12px 0 0;text-align:center}
.sbp-due{text-align:center;margin:12px 0 0;font-size:17px}
.qr-box{display:flex;flex-direction:column;align-items:center;margin:0 auto}
.qr-box svg{width:200px;height:200px;border:1px solid var(--line);border-radius:12px;padding:8px;background:#fff}
.qr-box.big svg{width:260px;height:260px}
figure{margin:18px 0}
details.sandbox{margin:14px 0 4px;border:1px dashed var(--line);border-radius:10px;padding:8px 12px}
details.sandbox summary{cursor:pointer;font-size:13px;color:var(--muted)}
details.sandbox .field{margin:10px 0 4px}
.status{text-align:center}.status h1{margin-top:10px}.status .rows{text-align:left}
.qr-page{text-align:center}.qr-page .sum{margin:6px 0 4px}
.items{list-style:none;margin:12px 0 0;padding:10px 0 0;border-top:1px dashed var(--line)}
.item{display:flex;justify-content:space-between;gap:12px;padding:4px 0}.item-name{min-width:0;word-wrap:break-word}.item-name .small{white-space:nowrap}
.item-sum{white-space:nowrap;font-variant-numeric:tabular-nums}
fieldset.payer{border:0;margin:0 0 8px;padding:0 0 6px;min-width:0;border-bottom:1px solid var(--line)}
.check{display:flex;gap:10px;align-items:flex-start;font-size:14px;line-height:1.4;cursor:pointer}.check input{margin-top:2px;width:18px;height:18px;flex:none}
input[type=email],input[type=tel],textarea{width:100%;font:inherit;font-size:17px;padding:12px 14px;border:1px solid var(--line);border-radius:10px;background:#fff;color:var(--ink)}
textarea{resize:vertical}textarea[aria-invalid=true]{border-color:var(--bad)}
.back{display:block;text-align:center;margin-top:14px;color:var(--accent);text-decoration:none;font-weight:600}
.back:hover,.back:focus-visible{text-decoration:underline}
.foot{color:var(--muted);font-size:12px;margin-top:16px;text-align:center}.foot .ico{vertical-align:-2px}.foot .profile{display:block;margin-top:4px}
@media (min-width:900px){.wrap{padding-top:56px}}
@media (prefers-color-scheme:dark){:root{--ink:#e8ecf4;--muted:#9aa5b8;--line:#323a4a;--bg:#0f141d;--card:#1a2130}
 input[type=text],input[type=password],input[type=email],input[type=tel],textarea{background:#121826;color:var(--ink)}.tabs{background:#121826}.notice{background:#20294a}.btn.secondary{background:#20294a;color:#b8c6ff}.qr-box svg{background:#fff}}
.apps{margin-top:14px}.apps .btn{margin-top:8px}
@media (min-width:700px){.apps .btn{display:inline-block;width:auto;margin-right:8px;font-size:15px;padding:10px 14px}}
`;
