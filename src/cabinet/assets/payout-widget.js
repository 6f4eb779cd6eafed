// The payout accounts page: YooKassa's payout widget (PayoutsData) collects the card in its own
// iframe; its answer (payout_token, first6, last4, card_type, issuer_name) is posted to
// /cabinet/accounts/token. The card number never passes through this page or this service.
(() => {
  const box = document.getElementById('payout-widget');
  const form = document.getElementById('payout-token-form');
  if (!box || !form) return;
  const error = document.getElementById('payout-widget-error');
  const fail = (code) => {
    error.textContent = (error.getAttribute('data-text') || '{code}').replace('{code}', String(code));
    error.hidden = false;
  };
  const start = () => {
    const widget = new window.PayoutsData({
      type: 'payout',
      account_id: box.getAttribute('data-account-id'),
      success_callback: (data) => {
        for (const f of ['payout_token', 'first6', 'last4', 'card_type', 'issuer_name']) {
          const input = form.elements.namedItem(f);
          if (input) input.value = data && data[f] != null ? String(data[f]) : '';
        }
        widget.clearListeners();
        form.submit();
      },
      error_callback: (e) => fail(e && e.code ? e.code : e),
    });
    widget.render('payout-widget-form').then(() => {
      const loading = document.getElementById('payout-widget-loading');
      if (loading) loading.hidden = true;
    }, (e) => fail(e && e.message ? e.message : 'render'));
  };
  if (window.PayoutsData) { start(); return; }
  const s = document.createElement('script');
  s.src = box.getAttribute('data-script');
  s.onload = start;
  s.onerror = () => fail('script');
  document.head.appendChild(s);
})();
