/**
 * JSON text whose numbers that are not in their shortest form are kept as their text: `1e3`,
 * `1E2`, `100.000`, `-0` or twenty digits become the strings "1e3", "1E2", "100.000", "-0",
 * "12345678901234567890"; `150.5`, `99`, `100` stay numbers. JSON.parse alone would hand over
 * 1000 for `1e3` and 100 for `100.000`, and an amount must be read by the digits the client
 * sent (amount-text.ts). Strings, structure and every other token are left as they are, so
 * text that is not JSON stays not JSON.
 */
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** Cheap test: could the text hold a number whose shortest form differs? */
const MAYBE = /\d[eE]|\.\d*0(?!\d)|-0|\d{16}/;

export function keepNumberText(json: string): string {
  if (!MAYBE.test(json)) return json;
  let out = '';
  let from = 0;
  let i = 0;
  const n = json.length;
  while (i < n) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string: its end is the next quote after an even run of backslashes.
      i++;
      for (;;) {
        const q = json.indexOf('"', i);
        if (q < 0) { i = n; break; }
        let k = q - 1;
        while (k >= i && json.charCodeAt(k) === 92 /* \ */) k--;
        const escaped = (q - 1 - k) % 2 === 1;
        i = q + 1;
        if (!escaped) break;
      }
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(json);
      if (!m) { i++; continue; }
      const token = m[0];
      if (String(Number(token)) !== token) {
        out += `${json.slice(from, i)}"${token}"`;
        from = i + token.length;
      }
      i += token.length;
      continue;
    }
    i++;
  }
  return from === 0 ? json : out + json.slice(from);
}
