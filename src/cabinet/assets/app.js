// Progressive enhancement only: every page works without this file.
document.addEventListener('click', (ev) => {
  const copy = ev.target.closest('[data-copy]');
  if (copy) {
    const input = document.getElementById(copy.getAttribute('data-copy'));
    if (!input) return;
    input.select();
    const done = () => { const old = copy.textContent; copy.textContent = copy.getAttribute('data-copied') || old; setTimeout(() => { copy.textContent = old; }, 1500); };
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, () => { document.execCommand('copy'); done(); });
    else { document.execCommand('copy'); done(); }
  }
  const confirmBtn = ev.target.closest('[data-confirm]');
  if (confirmBtn && !window.confirm(confirmBtn.getAttribute('data-confirm'))) ev.preventDefault();
});
