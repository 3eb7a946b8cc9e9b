// The message log (the history readers GET /sms uses): filter controls that write a Grammar A
// URL query, the query itself as "advanced" (the URL form `status_eq=delivered&country_eq=DE` or
// the JSON form `{"filter":[...]}`), totals (the statistics GET /sms/stats answers), paging and a
// bounded CSV export of the filter; and one message's page: its status, its DLR timeline with
// every webhook attempt, its workflow.
import { WORKFLOW_IDS } from '../../../../core/bus/temporal';
import { AppError, ERRORS } from '../../../../core/errors';
import type { Request } from 'express';
import { compile, parseUrl, SMS_FIELDS, type Query } from '../../../../core/filters/grammar-a';
import { compileStats } from '../../../../core/filters/grammar-a/stats';
import { isId } from '../../../../core/ids';
import { fromMicros } from '../../../../core/money';
import { FINAL_STATUSES, type MessageStatus, type SmsMessage, type SmsStatsRow } from '../../../../core/sms';
import { ConsoleError, queryParam, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { html, notice, scrollBox, table, time, type Html } from '../html';

const PAGE_SIZE = 50;

/** The filter box's text as list parameters, with the page's paging unless the filter sets its own. */
export function logParams(text: string, start: number): URLSearchParams {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let query: unknown;
    try {
      query = JSON.parse(trimmed);
    } catch {
      throw new AppError('INVALID_FILTER', 'the filter starts with "{" but is not valid JSON (the JSON form is the value of _q)');
    }
    if (query && typeof query === 'object' && !Array.isArray(query) && !('paging' in query)) query = { ...query, paging: { start, limit: PAGE_SIZE } };
    return new URLSearchParams({ _q: JSON.stringify(query) });
  }
  const params = new URLSearchParams(trimmed.replace(/^\?/, ''));
  if (!params.has('_start') && !params.has('_limit')) {
    params.set('_start', String(start));
    params.set('_limit', String(PAGE_SIZE));
  }
  return params;
}

function messageRow(ctx: Signed, m: SmsMessage): Html {
  return html`<tr><td><a href="${ctx.base}/messages/${m.id}"><code>${m.id}</code></a></td><td>${time(m.createdAt)}</td><td>${m.from}</td><td>${m.to}</td>
<td class="status-${m.status}">${m.status}</td><td class="num">${m.statusCode}</td><td>${m.country}</td><td class="num">${fromMicros(m.priceUserMicros)}</td></tr>`;
}

/** The filter controls and the Grammar A URL condition each one writes. */
export const CONTROLS = [
  ['status', 'status_eq'], ['direction', 'direction_eq'], ['country', 'country_eq'], ['from', 'from_eq'], ['to', 'to_eq'],
  ['clientId', 'clientId_eq'], ['since', 'createdAt_gte'], ['until', 'createdAt_lt'],
] as const;
type Control = (typeof CONTROLS)[number][0];

const MESSAGE_STATUSES: readonly MessageStatus[] = ['queued', 'sent', 'accepted', 'buffered', 'delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown'];

/**
 * The controls' values as a Grammar A URL query (URLSearchParams writes `+` as %2B). A date the
 * page's script did not convert (no JavaScript: `since_local`, a picker's value) counts as UTC.
 */
export function controlsFilter(values: (name: string) => string): string {
  const params = new URLSearchParams();
  for (const [control, param] of CONTROLS) {
    let value = values(control).trim();
    if (!value && (control === 'since' || control === 'until')) {
      const local = values(`${control}_local`).trim();
      if (local) value = `${local}${local.length === 16 ? ':00' : ''}Z`;
    }
    if (control === 'country') value = value.toUpperCase();
    if (value) params.set(param, value);
  }
  return params.toString();
}

/** What the controls show of a filter (its URL form's conditions they write); `other`: it has conditions they cannot show. */
export function controlsOf(filter: string): { values: Partial<Record<Control, string>>; other: boolean } {
  const trimmed = filter.trim();
  if (trimmed === '') return { values: {}, other: false };
  if (trimmed.startsWith('{')) return { values: {}, other: true };
  const params = new URLSearchParams(trimmed.replace(/^\?/, ''));
  const values: Partial<Record<Control, string>> = {};
  let other = false;
  for (const [key, value] of params) {
    const control = CONTROLS.find(([, param]) => param === key);
    if (control && values[control[0]] === undefined) values[control[0]] = value;
    else if (!['_start', '_limit', '_sort'].includes(key)) other = true;
  }
  return { values, other };
}

/** The filter as a Query without paging, sorting or grouping: what the totals and the export count. */
function filterOnly(filter: string): Query {
  const query = parseUrl(logParams(filter, 0));
  return { filter: query.filter, sort: [], ...(query.origin ? { origin: query.origin } : {}) };
}

/** Most rows one CSV export holds; a filter matching more is refused with the count. */
export const EXPORT_LIMIT = 100_000;
const EXPORT_PAGE = 1000;
const CSV_COLUMNS = ['id', 'createdAt', 'from', 'to', 'status', 'statusCode', 'country', 'clientId', 'messagesCount', 'priceUser', 'currency', 'text'] as const;

/** A CSV field (RFC 4180, always quoted); a value a spreadsheet would run as a formula gets a leading `'` (a +E.164 number stays as it is). */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : String(value);
  if (/^[=@\t\r]/.test(text) || (/^[+-]/.test(text) && !/^[+-]?\d+(\.\d+)?$/.test(text))) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

function csvRow(m: SmsMessage): string {
  const values: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: m.id, createdAt: m.createdAt, from: m.from, to: m.to, status: m.status, statusCode: m.statusCode, country: m.country,
    clientId: m.clientId, messagesCount: m.messagesCount, priceUser: fromMicros(m.priceUserMicros), currency: m.currency, text: m.text,
  };
  return `${CSV_COLUMNS.map((c) => csvField(values[c])).join(',')}\r\n`;
}

export function messageRoutes(routes: ConsoleRoutes): void {
  const { router, deps, services } = routes;
  const history = deps.services.messageHistory;
  const directed = SMS_FIELDS.some((f) => f.name === 'direction');
  const query = (req: Request, name: string): string => queryParam(req, name).slice(0, 4000);

  router.get('/messages', signed(routes, async (req, res, ctx) => {
    // The controls' form: its values become the filter, in the URL (one shareable form: ?filter=…).
    if (req.query['build'] === '1') {
      res.redirect(303, `${ctx.base}/messages?${new URLSearchParams({ filter: controlsFilter((name) => query(req, name)) }).toString()}`);
      return;
    }
    const filter = query(req, 'filter');
    const start = Math.max(0, Math.min(1_000_000, Number(req.query['start']) || 0));
    const v = { orgId: ctx.org.id, projectId: null };
    let rows: SmsMessage[] = [];
    let totals: SmsStatsRow | undefined;
    let problem: string | undefined;
    try {
      const compiled = compile(parseUrl(logParams(filter, start)), SMS_FIELDS);
      // The totals: the statistics of the same filter; one beyond its ceiling leaves the rows shown, without totals.
      const counted = deps.services.stats.sms(v, compileStats(filterOnly(filter), 'sms'), ctx.org.currency)
        .catch((err: unknown) => { if (err instanceof AppError && err.status === ERRORS.CONSOLE_BAD_REQUEST.status) return []; throw err; });
      [rows, [totals]] = await Promise.all([history.list(v, compiled), counted]);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== ERRORS.CONSOLE_BAD_REQUEST.status) throw err;
      problem = err.message;
    }
    const pageLink = (to: number, label: string): Html => html`<a href="${ctx.base}/messages?${new URLSearchParams({ filter, start: String(to) }).toString()}">${label}</a>`;
    const count = totals?.messages;
    const paging = rows.length === 0
      ? (start > 0 ? html`<p class="paging">${pageLink(Math.max(0, start - PAGE_SIZE), '← newer')}</p>` : '')
      : html`<p class="paging">${start > 0 ? pageLink(Math.max(0, start - PAGE_SIZE), '← newer') : ''} rows ${start + 1}–${start + rows.length}${count === undefined ? '' : ` of ${count}`} ${rows.length === PAGE_SIZE ? pageLink(start + PAGE_SIZE, 'older →') : ''}</p>`;
    const { values, other } = controlsOf(filter);
    const text = (control: Control, label: string, hint: string, attrs: Html = html``): Html => html`<label>${label}<input name="${control}" value="${values[control] ?? ''}" placeholder="${hint}" spellcheck="false" autocomplete="off"${attrs}></label>`;
    const select = (control: Control, label: string, options: readonly string[], disabled = false): Html => html`<label>${label}<select name="${control}"${disabled ? ' disabled' : ''}><option value="">any</option>${options.map((o) => html`<option${values[control] === o ? ' selected' : ''}>${o}</option>`)}</select></label>`;
    const date = (control: 'since' | 'until', label: string): Html => html`<label>${label}<input type="datetime-local" name="${control}_local" data-iso="${control}-iso"></label><input type="hidden" name="${control}" id="${control}-iso" value="${values[control] ?? ''}">`;
    const exportHref = `${ctx.base}/messages.csv?${new URLSearchParams({ filter }).toString()}`;
    const totalsLine = totals && !problem
      ? html`<p class="totals" id="totals"><span><strong id="total-count">${totals.messages}</strong> messages</span><span>${totals.delivered} delivered</span><span>${totals.failed + totals.expired + totals.rejected + totals.error} failed, expired, rejected or error</span><span>${totals.pending} pending</span><span>delivery rate ${totals.deliveryRate === null ? '–' : `${Math.round(totals.deliveryRate * 1000) / 10} %`}</span><span>${totals.cost} ${totals.currency}</span></p>`
      : '';
    send(res, ctx, 'Messages', html`<form method="get" action="${ctx.base}/messages" class="card" id="log-filter" aria-label="Filter the message log">
<input type="hidden" name="build" value="1"><div class="filters">
${select('status', 'Status', MESSAGE_STATUSES)}${select('direction', 'Direction', ['outbound', 'inbound'], !directed)}
${text('country', 'Country', 'DE', html` maxlength="2"`)}${text('from', 'From', 'sender')}${text('to', 'To', '+4915112345678')}${text('clientId', 'Client id', 'your id')}
${date('since', 'Created from')}${date('until', 'Created before')}</div>
<p class="hint">Dates in your time zone (<span data-time-zone>UTC without JavaScript</span>), sent as ISO 8601 UTC.${directed ? '' : ' Direction: not available yet (messages carry no direction field).'}</p>
<div class="filters"><div class="actions"><button type="submit">Filter</button><a href="${ctx.base}/messages">Clear</a></div></div></form>
<details class="card advanced"${other || problem ? ' open' : ''}><summary>Advanced: the Grammar A query${other ? ' (the filter has conditions the controls do not show)' : ''}</summary>
<form method="get" action="${ctx.base}/messages" class="filter"><label>Filter (Grammar A: <code>status_eq=delivered&amp;country_eq=DE</code> — a URL query, so <code>%2B</code> for + — or <code>{"filter":[{"field":"status","operator":"eq","value":"delivered"}]}</code>)
<input name="filter" value="${filter}" id="filter" spellcheck="false"></label><button type="submit">Filter</button></form></details>
${problem ? notice('error', problem) : ''}${totalsLine}
${problem ? '' : html`<p><a class="button-link" id="export" href="${exportHref}" download>Export CSV</a> <span class="hint">every message of this filter, at most ${EXPORT_LIMIT.toLocaleString('en')} rows</span></p>`}
${scrollBox('Messages', table(['Id', 'Created', 'From', 'To', 'Status', 'Code', 'Country', 'Price'], rows.map((m) => messageRow(ctx, m))))}${paging}`, problem ? 400 : 200);
  }));

  router.get('/messages.csv', signed(routes, async (req, res, ctx) => {
    const filter = query(req, 'filter');
    const v = { orgId: ctx.org.id, projectId: null };
    // Rows created after the export began stay out: the pages below never shift under it.
    const startedAt = new Date().toISOString();
    let base: Query;
    let count: number;
    try {
      const q = filterOnly(filter);
      base = { ...q, filter: { kind: 'and', children: [...q.filter.children, { kind: 'cond', field: 'createdAt', operator: 'lte', value: startedAt }] } };
      count = (await deps.services.stats.sms(v, compileStats(base, 'sms'), ctx.org.currency))[0]?.messages ?? 0;
    } catch (err) {
      if (err instanceof AppError && err.status === ERRORS.CONSOLE_BAD_REQUEST.status) throw new ConsoleError('CONSOLE_BAD_REQUEST', err.message);
      throw err;
    }
    if (count > EXPORT_LIMIT) {
      throw new ConsoleError('CONSOLE_BAD_REQUEST', `the filter matches ${count.toLocaleString('en')} messages; an export holds at most ${EXPORT_LIMIT.toLocaleString('en')}: narrow the filter (a shorter date range) and export again`);
    }
    res.status(200).set({ 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="messages-${startedAt.slice(0, 19).replace(/:/g, '')}Z.csv"` });
    res.write(`${CSV_COLUMNS.join(',')}\r\n`);
    let closed = false;
    res.on('close', () => { closed = true; });
    try {
      for (let offset = 0; offset < EXPORT_LIMIT && !closed; offset += EXPORT_PAGE) {
        const sorted: Query = { ...base, sort: [{ field: 'createdAt', direction: 'desc' }, { field: 'id', direction: 'desc' }], paging: { start: offset, limit: EXPORT_PAGE } };
        const batch = await history.list(v, compile(sorted, SMS_FIELDS));
        const chunk = batch.slice(0, EXPORT_LIMIT - offset).map(csvRow).join('');
        if (chunk && !res.write(chunk)) await new Promise((resolve) => { res.once('drain', resolve); res.once('close', resolve); });
        if (batch.length < EXPORT_PAGE) break;
      }
      res.end();
    } catch (err) {
      (req.log ?? deps.log).error({ err }, 'console CSV export failed');
      res.destroy(err instanceof Error ? err : undefined);
    }
  }));

  router.get('/messages/:id', signed(routes, async (req, res, ctx) => {
    const id = String(req.params['id']);
    if (!isId(id)) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such message in this organization');
    const current = await deps.services.states.get(id);
    const message = current ? (current.orgId === ctx.org.id ? current : null) : await history.get({ orgId: ctx.org.id, projectId: null }, id);
    if (!message) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such message in this organization');
    const timeline = await deps.services.dlrHistory.forMessage(ctx.org.id, id);
    const owner = await services.lifecycleOwners?.find(id).catch(() => null);
    const workflowId = owner?.workflowId ?? WORKFLOW_IDS.lifecycle(id);
    const link = services.workflowUrl ? html`<a href="${services.workflowUrl(workflowId)}" rel="noreferrer">${workflowId}</a>` : html`<code>${workflowId}</code>`;
    const steps = timeline.map((t) => html`<li class="status-${t.status}"><strong>${t.status}</strong> (code ${t.code}) at ${time(t.eventAt)}
${t.attempts.length === 0 ? html`<p class="meta">no webhook attempt yet</p>` : html`<ul>${t.attempts.map((a) => html`<li>attempt ${a.attempt}: ${a.outcome}${a.responseStatus === null ? '' : html`, HTTP ${a.responseStatus}`}, ${a.latencyMs} ms at ${time(a.at)}${a.error ? html` — ${a.error}` : ''}</li>`)}</ul>`}</li>`);
    send(res, ctx, `Message ${id}`, html`<section class="card"><dl>
<dt>Status</dt><dd id="message-status" class="status-${message.status}">${message.status} (code ${message.statusCode})</dd>
<dt>From → to</dt><dd>${message.from} → ${message.to} (${message.country})</dd><dt>Text</dt><dd>${message.text}</dd>
<dt>Segments</dt><dd>${message.messagesCount} · ${message.encoding}</dd><dt>Price</dt><dd>${fromMicros(message.priceUserMicros)}</dd>
<dt>Created</dt><dd>${time(message.createdAt)}</dd><dt>Workflow</dt><dd id="workflow" data-workflow-id="${workflowId}">${link}${owner ? ' (the batch lifecycle holding this message)' : ''}</dd></dl></section>
<section class="card"><h2>DLR timeline</h2>${steps.length ? html`<ol id="timeline">${steps}</ol>` : html`<p class="empty" id="timeline">no transition recorded yet</p>`}
${FINAL_STATUSES.includes(message.status) ? '' : html`<p class="hint" data-refresh="2000">The page refreshes itself until the message reaches a final status.</p>`}</section>`);
  }));
}
