// Dead letters: DLRs of this organization's tokens whose webhook retry window closed, and
// their re-drive on a fresh retry schedule (the admin CLI's `dlr redrive`).
import { ConsoleError, field, queryParam, send, signed, type ConsoleRoutes } from '../handler';
import { html, notice, postButton, table } from '../html';

export function deadLetterRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;
  const ofOrg = async (orgId: string) => services.deadLetters.list((await services.accounts.listTokens({ orgId })).map((t) => t.id));

  router.get('/dead-letters', signed(routes, async (req, res, ctx) => {
    const dead = await ofOrg(ctx.org.id);
    const redriven = queryParam(req, 'redriven');
    send(res, ctx, 'Dead letters', html`${redriven ? notice('ok', `${redriven} DLR(s) re-driven: they are delivered again on a fresh retry schedule.`) : ''}
${table(['Message', 'DLR', 'Status', 'Token', 'Failed', 'Reason', ''], dead.map((d) => html`<tr><td><a href="${ctx.base}/messages/${d.messageId}"><code>${d.messageId}</code></a></td>
<td class="num">#${d.seq}</td><td>${d.payload.status}</td><td><a href="${ctx.base}/tokens/${d.tokenId}">${d.tokenId}</a></td><td>${d.failedAt}</td><td>${d.reason}</td>
<td>${postButton(ctx, `${ctx.base}/dead-letters/redrive`, 'Re-drive', { key: d.key })}</td></tr>`))}
${dead.length > 1 ? html`<p>${postButton(ctx, `${ctx.base}/dead-letters/redrive`, `Re-drive all ${dead.length}`, { key: '*' })}</p>` : ''}`);
  }));

  router.post('/dead-letters/redrive', signed(routes, async (req, res, ctx) => {
    const key = field(req, 'key');
    const dead = (await ofOrg(ctx.org.id)).filter((d) => key === '*' || d.key === key);
    if (dead.length === 0) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such dead letter in this organization');
    for (const d of dead) await services.deadLetters.redrive(d);
    req.log?.info({ count: dead.length }, 'console: dead letters re-driven');
    res.redirect(303, `${ctx.base}/dead-letters?redriven=${dead.length}`);
  }));
}
