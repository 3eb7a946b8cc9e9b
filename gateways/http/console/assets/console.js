// The script of every console page (no inline scripts: the Content-Security-Policy forbids them):
// confirmations of destructive forms, copy buttons, the self-refresh of a message page, times
// in the reader's locale and time zone, and the date pickers of the message log filter.
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

// Times: `<time datetime="…">` in the reader's locale and time zone; the ISO form stays on hover.
// `data-day`: a UTC day (the statistics' daily bucket), shown as that date.
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });
document.querySelectorAll('time[datetime]').forEach((el) => {
  const at = new Date(el.getAttribute('datetime') || '');
  if (Number.isNaN(at.getTime())) return;
  el.textContent = (el.hasAttribute('data-day') ? dayFormat : timeFormat).format(at);
  el.title = el.getAttribute('datetime') || '';
});
document.querySelectorAll('[data-time-zone]').forEach((el) => { el.textContent = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'; });

// Date pickers (datetime-local, the reader's time zone) fill the ISO field the filter takes:
// `data-iso="<id of the hidden field>"`. Shown from the ISO value on load; written back on submit.
const pad = (n) => String(n).padStart(2, '0');
const localValue = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
document.querySelectorAll('input[data-iso]').forEach((picker) => {
  const target = document.getElementById(picker.getAttribute('data-iso') || '');
  const at = target && target.value ? new Date(target.value) : null;
  if (at && !Number.isNaN(at.getTime())) picker.value = localValue(at);
});
document.addEventListener('submit', (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement)) return;
  form.querySelectorAll('input[data-iso]').forEach((picker) => {
    const target = document.getElementById(picker.getAttribute('data-iso') || '');
    if (!target) return;
    const at = picker.value ? new Date(picker.value) : null;
    target.value = at && !Number.isNaN(at.getTime()) ? at.toISOString() : '';
    picker.disabled = true; // the ISO field carries it; re-enabled when the page is shown again (back button)
  });
});
window.addEventListener('pageshow', () => { document.querySelectorAll('input[data-iso]').forEach((p) => { p.disabled = false; }); });
