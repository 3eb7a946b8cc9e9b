// Scheduled messages of the organization (DESIGN §4 Scheduling): the message log filtered on
// `status_eq=scheduled` (the history reader of GET /sms, soonest first), each with a cancel
// button that calls the core function POST /transactional/v1/sms/{id}/cancel calls
// (deps.services.scheduledCancel, core/sms/schedule.ts): canceled and refunded, or a 409 once it left.
import { compile, parseUrl, SMS_FIELDS } from '../../../../core/filters/grammar-a';
import { isId } from '../../../../core/ids';
import { fromMicros } from '../../../../core/money';
import { ConsoleError, queryParam, send, signed, type ConsoleRoutes } from '../handler';
import { html, notice, postButton, table, time } from '../html';

const PAGE = 50;

export function scheduledRoutes(routes: ConsoleRoutes): void {
  const { router, deps } = routes;

  router.get('/scheduled', signed(routes, async (req, res, ctx) => {
    const start = Math.max(0, Math.min(1_000_000, Number(req.query['start']) || 0));
    const query = parseUrl(new URLSearchParams({ status_eq: 'scheduled', _sort: 'scheduledAt', _start: String(start), _limit: String(PAGE + 1) }));
    const rows = await deps.services.messageHistory.list({ orgId: ctx.org.id, projectId: null }, compile(query, SMS_FIELDS));
    const canceled = queryParam(req, 'canceled');
    const cancelable = deps.services.scheduledCancel !== undefined;
    const next = rows.length > PAGE ? html`<p><a href="${ctx.base}/scheduled?start=${start + PAGE}">Next ${PAGE}</a></p>` : '';
    send(res, ctx, 'Scheduled messages', html`${canceled ? notice('ok', html`Message <code>${canceled}</code> canceled; its charge is refunded.`) : ''}
${cancelable ? '' : html`<p class="meta">Cancel is not served by this process (no Temporal client).</p>`}
${table(['Message', 'Scheduled for', 'To', 'Price', ''], rows.slice(0, PAGE).map((m) => html`<tr data-message="${m.id}"><td><a href="${ctx.base}/messages/${m.id}"><code>${m.id}</code></a></td>
<td>${time(m.scheduledAt)}</td><td>${m.to}</td><td>${fromMicros(m.priceUserMicros)} ${m.currency}</td>
<td>${cancelable ? postButton(ctx, `${ctx.base}/scheduled/${m.id}/cancel`, 'Cancel', {}, 'Cancel this scheduled message? It will not be sent and its charge is refunded.') : ''}</td></tr>`))}${next}`);
  }));

  router.post('/scheduled/:id/cancel', signed(routes, async (req, res, ctx) => {
    const id = String(req.params['id']);
    const cancel = deps.services.scheduledCancel;
    if (!cancel || !isId(id)) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such scheduled message in this organization');
    // NOT_FOUND (another organization's message too) and ALREADY_LEFT come back as their pages (404, 409).
    const message = await cancel.cancel({ orgId: ctx.org.id, projectId: null }, id);
    req.log?.info({ message: message.id }, 'console: scheduled message canceled');
    res.redirect(303, `${ctx.base}/scheduled?canceled=${encodeURIComponent(message.id)}`);
  }));
}
