// The console's only script (no inline scripts: the Content-Security-Policy forbids them):
// confirmations of destructive forms, copy buttons, and the self-refresh of a message page.
document.addEventListener('submit', (event) => {
  const form = event.target;
  const question = form instanceof HTMLFormElement ? form.dataset.confirm : undefined;
  if (question && !window.confirm(question)) event.preventDefault();
});
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  const source = button ? document.getElementById(button.getAttribute('data-copy') || '') : null;
  if (source && navigator.clipboard) navigator.clipboard.writeText(source.textContent || '').then(() => { button.textContent = 'Copied'; }, () => {});
});
const refresh = document.querySelector('[data-refresh]');
if (refresh) setTimeout(() => window.location.reload(), Number(refresh.getAttribute('data-refresh')) || 2000);
