// The message log (the history readers GET /sms uses, with a Grammar A filter box taking the
// URL form `status_eq=delivered&country_eq=DE` or the JSON form `{"filter":[...]}`, and paging),
// and one message's page: its status, its DLR timeline with every webhook attempt, its workflow.
import { WORKFLOW_IDS } from '../../../../core/bus/temporal';
import { AppError } from '../../../../core/errors';
import { compile, parseUrl, SMS_FIELDS } from '../../../../core/filters/grammar-a';
import { isId } from '../../../../core/ids';
import { fromMicros } from '../../../../core/money';
import { FINAL_STATUSES, type SmsMessage } from '../../../../core/sms/message';
import { ConsoleError, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { html, notice, table, type Html } from '../html';

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
  return html`<tr><td><a href="${ctx.base}/messages/${m.id}"><code>${m.id}</code></a></td><td>${m.createdAt}</td><td>${m.from}</td><td>${m.to}</td>
<td class="status-${m.status}">${m.status}</td><td class="num">${m.statusCode}</td><td>${m.country}</td><td class="num">${fromMicros(m.priceUserMicros)}</td></tr>`;
}

export function messageRoutes(routes: ConsoleRoutes): void {
  const { router, deps, services } = routes;
  const history = deps.services.messageHistory;

  router.get('/messages', signed(routes, async (req, res, ctx) => {
    const filter = typeof req.query['filter'] === 'string' ? req.query['filter'].slice(0, 4000) : '';
    const start = Math.max(0, Math.min(1_000_000, Number(req.query['start']) || 0));
    let rows: SmsMessage[] = [];
    let problem: string | undefined;
    try {
      rows = await history.list({ orgId: ctx.org.id, projectId: null }, compile(parseUrl(logParams(filter, start)), SMS_FIELDS));
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      problem = err.message;
    }
    const pageLink = (to: number, label: string): Html => html`<a href="${ctx.base}/messages?${new URLSearchParams({ filter, start: String(to) }).toString()}">${label}</a>`;
    const paging = html`<p class="paging">${start > 0 ? pageLink(Math.max(0, start - PAGE_SIZE), '← newer') : ''} rows ${start + 1}–${start + rows.length} ${rows.length === PAGE_SIZE ? pageLink(start + PAGE_SIZE, 'older →') : ''}</p>`;
    send(res, ctx, 'Messages', html`<form method="get" action="${ctx.base}/messages" class="card filter">
<label>Filter (Grammar A: <code>status_eq=delivered&amp;country_eq=DE</code> — a URL query, so <code>%2B</code> for + — or <code>{"filter":[{"field":"status","operator":"eq","value":"delivered"}]}</code>)
<input name="filter" value="${filter}" id="filter" spellcheck="false"></label><button type="submit">Filter</button></form>
${problem ? notice('error', problem) : ''}
${table(['Id', 'Created', 'From', 'To', 'Status', 'Code', 'Country', 'Price'], rows.map((m) => messageRow(ctx, m)))}${paging}`, problem ? 400 : 200);
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
    const steps = timeline.map((t) => html`<li class="status-${t.status}"><strong>${t.status}</strong> (code ${t.code}) at ${t.eventAt}
${t.attempts.length === 0 ? html`<p class="meta">no webhook attempt yet</p>` : html`<ul>${t.attempts.map((a) => html`<li>attempt ${a.attempt}: ${a.outcome}${a.responseStatus === null ? '' : html`, HTTP ${a.responseStatus}`}, ${a.latencyMs} ms at ${a.at}${a.error ? html` — ${a.error}` : ''}</li>`)}</ul>`}</li>`);
    send(res, ctx, `Message ${id}`, html`<section class="card"><dl>
<dt>Status</dt><dd id="message-status" class="status-${message.status}">${message.status} (code ${message.statusCode})</dd>
<dt>From → to</dt><dd>${message.from} → ${message.to} (${message.country})</dd><dt>Text</dt><dd>${message.text}</dd>
<dt>Segments</dt><dd>${message.messagesCount} · ${message.encoding}</dd><dt>Price</dt><dd>${fromMicros(message.priceUserMicros)}</dd>
<dt>Created</dt><dd>${message.createdAt}</dd><dt>Workflow</dt><dd id="workflow" data-workflow-id="${workflowId}">${link}${owner ? ' (the batch lifecycle holding this message)' : ''}</dd></dl></section>
<section class="card"><h2>DLR timeline</h2>${steps.length ? html`<ol id="timeline">${steps}</ol>` : html`<p class="empty" id="timeline">no transition recorded yet</p>`}
${FINAL_STATUSES.includes(message.status) ? '' : html`<p class="hint" data-refresh="2000">The page refreshes itself until the message reaches a final status.</p>`}</section>`);
  }));
}
