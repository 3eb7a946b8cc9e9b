// Balance and price profiles of the organization (read-only: funds and prices are set by the
// admin CLI).
import { fromMicros } from '../../../../core/money';
import { send, signed, type ConsoleRoutes } from '../handler';
import { html, table } from '../html';

export function billingRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;
  router.get('/billing', signed(routes, async (_req, res, ctx) => {
    const [balance, sms, lookup] = await Promise.all([
      services.balances.get(ctx.org.id), services.accounts.listPrices(ctx.org.id, 'sms'), services.accounts.listPrices(ctx.org.id, 'lookup'),
    ]);
    const prices = (list: typeof sms) => table(['Country', 'Price', 'Currency'], list.map((p) => html`<tr><td>${p.country}</td><td class="num">${fromMicros(p.priceMicros)}</td><td>${p.currency}</td></tr>`));
    send(res, ctx, 'Balance & prices', html`<section class="card"><h2>Balance</h2><p class="big" id="balance">${fromMicros(balance?.availableMicros ?? 0)} ${balance?.currency ?? ctx.org.currency}</p>
<p class="hint">Funds are added with <code>npm run admin -- balance add --org ${ctx.org.id} --amount N</code>.</p></section>
<div class="columns"><section class="card"><h2>SMS, per segment</h2>${prices(sms)}</section><section class="card"><h2>Number lookup, per request</h2>${prices(lookup)}</section></div>`);
  }));
}
