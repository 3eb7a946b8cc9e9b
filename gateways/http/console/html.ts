// HTML of the console, built by one tagged template that escapes every interpolated value
// (text and attribute context alike) unless it is itself markup built by `html`.
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return (value as readonly Value[]).map(render).join('');
  return escapeHtml(value);
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, i) => { out += render(value) + (strings[i + 1] ?? ''); });
  return new Html(out);
}

export interface PageContext {
  readonly base: string;
  readonly email?: string;
  readonly orgName?: string;
  readonly csrf?: string;
}

const NAV: ReadonlyArray<readonly [string, string]> = [
  ['projects', 'Projects & tokens'], ['billing', 'Balance & prices'], ['messages', 'Messages'],
  ['dead-letters', 'Dead letters'], ['datasources', 'Datasources'], ['audience', 'Audience'],
];

/** The hidden field every changing form carries. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf ?? ''}">`;
}

/** A one-button form that POSTs to `action` with the CSRF token. */
export function postButton(ctx: PageContext, action: string, label: string, fields: Readonly<Record<string, string>> = {}, confirm?: string): Html {
  const hidden = Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${action}" class="inline"${confirm ? html` data-confirm="${confirm}"` : ''}>${csrfField(ctx)}${hidden}<button type="submit">${label}</button></form>`;
}

export function page(ctx: PageContext, title: string, body: Html): string {
  const nav = ctx.email
    ? html`<nav>${NAV.map(([path, label]) => html`<a href="${ctx.base}/${path}">${label}</a>`)}<span class="who" title="${ctx.orgName ?? ''}">${ctx.email}</span>
<form method="post" action="${ctx.base}/sign-out" class="inline">${csrfField(ctx)}<button type="submit">Sign out</button></form></nav>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · SMS console</title><link rel="stylesheet" href="${ctx.base}/assets/console.css"><script src="${ctx.base}/assets/console.js" defer></script></head>
<body><header><strong>SMS console</strong>${nav}</header><main><h1>${title}</h1>
${body}</main></body></html>
`.text;
}

export function table(headers: readonly string[], rows: readonly Html[]): Html {
  return rows.length === 0
    ? html`<p class="empty">(none)</p>`
    : html`<table><thead><tr>${headers.map((h) => html`<th>${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table>`;
}

export function notice(kind: 'ok' | 'error' | 'secret', content: Html | string): Html {
  return html`<div class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${content}</div>`;
}
