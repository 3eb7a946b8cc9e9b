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
  ['dashboard', 'Home'], ['projects', 'Projects & tokens'], ['billing', 'Balance & prices'], ['messages', 'Messages'],
  ['scheduled', 'Scheduled'], ['opt-outs', 'Opt-outs'], ['dead-letters', 'Dead letters'], ['datasources', 'Datasources'],
  ['audience', 'Audience'], ['segments', 'Segments'],
];

/** The options of a project picker, `selected` the chosen project's id. */
export function projectOptions(projects: ReadonlyArray<{ readonly id: string; readonly name: string }>, selected?: string): Html[] {
  return projects.map((p) => html`<option value="${p.id}"${p.id === selected ? html` selected` : ''}>${p.name}</option>`);
}

/** The hidden field every changing form carries. */
export function csrfField(ctx: PageContext): Html {
  return html`<input type="hidden" name="_csrf" value="${ctx.csrf ?? ''}">`;
}

/** A one-button form that POSTs to `action` with the CSRF token. */
export function postButton(ctx: PageContext, action: string, label: string, fields: Readonly<Record<string, string>> = {}, confirm?: string): Html {
  const hidden = Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`);
  return html`<form method="post" action="${action}" class="inline"${confirm ? html` data-confirm="${confirm}"` : ''}>${csrfField(ctx)}${hidden}<button type="submit">${label}</button></form>`;
}

/** What a page adds to the layout: its own scripts and stylesheets (console assets, by name). */
export interface PageAssets {
  readonly scripts?: readonly string[];
  readonly styles?: readonly string[];
}

export function page(ctx: PageContext, title: string, body: Html, assets: PageAssets = {}): string {
  const nav = ctx.email
    ? html`<nav aria-label="Console">${NAV.map(([path, label]) => html`<a href="${ctx.base}/${path}">${label}</a>`)}<span class="who" title="${ctx.orgName ?? ''}">${ctx.email}</span>
<form method="post" action="${ctx.base}/sign-out" class="inline">${csrfField(ctx)}<button type="submit">Sign out</button></form></nav>`
    : '';
  const styles = ['console.css', ...(assets.styles ?? [])].map((name) => html`<link rel="stylesheet" href="${ctx.base}/assets/${name}">`);
  const scripts = ['console.js', ...(assets.scripts ?? [])].map((name) => html`<script src="${ctx.base}/assets/${name}" defer></script>`);
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · SMS console</title><link rel="icon" href="${ctx.base}/assets/favicon.svg" type="image/svg+xml">${styles}${scripts}</head>
<body><a class="skip" href="#main">Skip to content</a><header><strong>SMS console</strong>${nav}</header><main id="main" tabindex="-1"><h1>${title}</h1>
${body}</main></body></html>
`.text;
}

/**
 * A time: the ISO form in the markup and on hover; console.js shows it in the reader's locale and
 * time zone (`day`: a UTC day, shown as its date).
 */
export function time(iso: string | null | undefined, day = false): Html {
  return iso ? html`<time datetime="${iso}" title="${iso}"${day ? html` data-day` : ''}>${iso}</time>` : html``;
}

/** A wide table in a box of its own that scrolls sideways (the page never does); focusable so the keyboard can scroll it. */
export function scrollBox(label: string, content: Html): Html {
  return html`<div class="table-box" role="region" aria-label="${label}" tabindex="0">${content}</div>`;
}

/**
 * A table; each cell carries its column's name (`data-label`), with which a narrow screen shows
 * the rows as stacked cards (console.css). `headers` name the columns of `rows`' cells in order.
 */
export function table(headers: readonly string[], rows: readonly Html[], empty = 'No results.'): Html {
  return rows.length === 0
    ? html`<p class="empty">${empty}</p>`
    : html`<table class="cards"><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows.map((row) => labelCells(row, headers))}</tbody></table>`;
}

/** Adds `data-label="<header>"` to each `<td` of a row built by `html` (the headers are ours, escaped here). */
function labelCells(row: Html, headers: readonly string[]): Html {
  let i = 0;
  return new Html(row.text.replace(/<td(?=[\s>])/g, () => `<td data-label="${escapeHtml(headers[i++] ?? '')}"`));
}

export function notice(kind: 'ok' | 'error' | 'secret', content: Html | string): Html {
  return html`<div class="notice ${kind}" role="${kind === 'error' ? 'alert' : 'status'}">${content}</div>`;
}
