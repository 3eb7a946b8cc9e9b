// POST /sms/quote (DESIGN §4 "POST /sms/quote prices without charging") and the 400 for unknown
// query parameters on a POST (DESIGN §4), over real HTTP against the integration stack: a
// quote's figures are what the real send then charges (the balance before and after), a quote
// moves no balance, an opted-out number is refused by the quote as by the send, each
// organization is quoted its own prices, legacy tokens quote at /sms/quote, the counter
// v1-sms-quote is its own, and `POST /sms?dryRun=true` is a 400 that sends and charges nothing.
import { toMicros } from '../../core/money';
import { KV_KEYS } from '../../core/bus/names';
import { eventually } from '../../support/eventually';
import { api } from '../../support/stack';
import { balanceMicros, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';

type Res = Awaited<ReturnType<typeof api>>;
interface QuoteItem { index: number; messagesCount: number; encoding: string; charsCount: number; country: string; pricePerSms: number; priceUser: number; currency: string }
interface Total { messages: number; messagesCount: number; price: number; currency: string; available: number; covered: boolean }
type Sent = Omit<QuoteItem, 'index' | 'currency'> & { id: string };

const LONG = 'x'.repeat(200); // GSM-7, 2 segments
const UNICODE = 'Grüße 😀 '.repeat(12); // UCS-2, 2 segments
/** What a quote item and a sent message (spec 1 §2.2, which has no currency) both report. */
const figures = (e: QuoteItem | Sent): Omit<QuoteItem, 'index' | 'currency'> => ({
  messagesCount: e.messagesCount, encoding: e.encoding, charsCount: e.charsCount, country: e.country, pricePerSms: e.pricePerSms, priceUser: e.priceUser,
});
const number = (suffix: string): string => `+49151${String(Date.now() % 10_000_000).padStart(7, '0')}${suffix}`.slice(0, 15);

let tenant: Tenant;

beforeAll(async () => {
  tenant = await createTenant({ balance: 50, legacy: true, rateLimits: { 'v1-sms-quote': 1000 } });
}, 60_000);

async function balance(orgId = tenant.orgId): Promise<number> {
  return (await balanceMicros(orgId)) ?? Number.NaN;
}

describe('DESIGN §4: POST /transactional/v1/sms/quote prices without charging', () => {
  test('an object: the quote\'s figures are the send\'s, the quote moves no balance, and the send then charges exactly total.price', async () => {
    const body = { from: 'Quote', to: number('1'), text: LONG };
    const before = await balance();
    const quote = await api(`${V1}/sms/quote`, { token: tenant.token, body });
    expect(quote.status).toBe(200);
    const { entity, total } = quote.body as { entity: QuoteItem; total: Total };
    expect(entity).toMatchObject({ index: 0, messagesCount: 2, encoding: 'GSM-7', charsCount: 200, country: 'DE', pricePerSms: 0.075, priceUser: 0.15, currency: 'EUR' });
    expect(total).toEqual({ messages: 1, messagesCount: 2, price: 0.15, currency: 'EUR', available: before / 1_000_000, covered: true });
    expect(await balance()).toBe(before);
    const sent = await api(`${V1}/sms`, { token: tenant.token, body });
    expect(sent.status).toBe(201);
    expect(figures((sent.body as { entity: Sent }).entity)).toEqual(figures(entity));
    expect(before - (await balance())).toBe(toMicros(total.price));
  });

  test('an array: per-item figures and errors are the bulk send\'s, and the bulk then charges exactly total.price', async () => {
    const body = [
      { from: 'Quote', to: number('2'), text: 'hello' },
      { from: 'Quote', to: '+33612345678', text: UNICODE, allowUnicode: true },
      { from: 'Quote', to: '+5511987654321', text: 'no price for BR' },
      { from: 'Quote', to: 'not a number', text: 'x' },
      { from: 'Quote', to: '+12025550123', text: LONG },
    ];
    const before = await balance();
    const quote = await api(`${V1}/sms/quote`, { token: tenant.token, body });
    expect(quote.status).toBe(200);
    const { entities, errors, total } = quote.body as { entities: QuoteItem[]; errors: unknown[]; total: Total };
    expect(entities.map((e) => [e.index, e.country, e.encoding, e.messagesCount])).toEqual([[0, 'DE', 'GSM-7', 1], [1, 'FR', 'UCS-2', 2], [4, 'US', 'GSM-7', 2]]);
    expect(await balance()).toBe(before);
    const sent = await api(`${V1}/sms/bulk`, { token: tenant.token, body });
    expect(sent.status).toBe(201);
    const result = sent.body as { entities: Sent[]; errors: unknown[] };
    expect(errors).toEqual(result.errors);
    expect(result.entities.map(figures)).toEqual(entities.map(figures));
    expect(total).toMatchObject({ messages: 3, messagesCount: 5, price: 0.235 }); // 0.075 + 2 × 0.07 + 2 × 0.01
    expect(before - (await balance())).toBe(toMicros(total.price));
  });

  test('an opted-out number: the quote refuses it with the send\'s 422 (object) and the bulk\'s item error (array); no balance moves', async () => {
    const to = number('3');
    await withAccounts(async (_accounts, _balances, nats) => { await nats.kv.optouts.put(KV_KEYS.optOut(tenant.projectId, to), JSON.stringify({ at: new Date().toISOString() })); });
    const before = await balance();
    // The product reads opt-outs from its KV mirror: the quote refuses once the mirror has it.
    const quote = await eventually(() => api(`${V1}/sms/quote`, { token: tenant.token, body: { from: 'Quote', to, text: 'hi' } }), { what: 'the opt-out in the product\'s mirror', until: (r: Res) => r.status === 422, timeoutMs: 10_000, intervalMs: 50 });
    const send = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Quote', to, text: 'hi' } });
    expect(send.status).toBe(422);
    expect(quote.body).toEqual(send.body);
    expect(quote.body).toEqual({ errors: { fields: { to: [expect.stringMatching(/opted out/)] } } });
    const bulkQuote = await api(`${V1}/sms/quote`, { token: tenant.token, body: [{ from: 'Quote', to, text: 'hi', clientId: 'q-opt' }] });
    const bulkSend = await api(`${V1}/sms/bulk`, { token: tenant.token, body: [{ from: 'Quote', to, text: 'hi', clientId: 'q-opt' }] });
    expect((bulkQuote.body as { errors: unknown }).errors).toEqual((bulkSend.body as { errors: unknown }).errors);
    expect((bulkQuote.body as { errors: unknown[] }).errors).toHaveLength(1);
    expect(await balance()).toBe(before);
  });

  test('tenant-scoped: another organization is quoted its own price profile; legacy tokens quote at POST /sms/quote', async () => {
    const other = await createTenant({ smsPrices: { DE: 0.2 } });
    const body = { from: 'Quote', to: number('4'), text: 'hello' };
    const theirs = await api(`${V1}/sms/quote`, { token: other.token, body });
    const ours = await api(`${V1}/sms/quote`, { token: tenant.token, body });
    expect((theirs.body as { entity: QuoteItem }).entity.pricePerSms).toBe(0.2);
    expect((ours.body as { entity: QuoteItem }).entity.pricePerSms).toBe(0.075);
    const legacy = await api('/sms/quote', { token: tenant.legacyToken as string, body });
    expect(legacy.status).toBe(200);
    expect(figures((legacy.body as { entity: QuoteItem }).entity)).toEqual(figures((ours.body as { entity: QuoteItem }).entity));
  }, 60_000);

  test('hostile bodies get the send\'s statuses (empty 422, 101 items 413, wrong types 400) and move no balance', async () => {
    const before = await balance();
    const item = { from: 'Quote', to: number('5'), text: 'x' };
    const statuses = await Promise.all([[], Array.from({ length: 101 }, () => item), { ...item, to: 4915112345678 }, 'text'].map(async (body) => (await api(`${V1}/sms/quote`, { token: tenant.token, body })).status));
    expect(statuses).toEqual([422, 413, 400, 400]);
    expect(await balance()).toBe(before);
  });

  test('spec 1 §8: v1-sms-quote is a counter of its own: beyond its grant a quote is a 429 while POST /sms still sends', async () => {
    const limited = await createTenant({ rateLimits: { 'v1-sms-quote': 1 } });
    const body = { from: 'Quote', to: number('6'), text: 'x' };
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await api(`${V1}/sms/quote`, { token: limited.token, body })).status);
    expect(statuses).toEqual([200, 429]);
    expect((await api(`${V1}/sms`, { token: limited.token, body })).status).toBe(201);
  }, 60_000);
});

describe('DESIGN §4: unknown query parameters on a POST are a 400', () => {
  test('POST /sms?dryRun=true is a 400 naming dryRun: nothing is sent or charged (a send without it then charges)', async () => {
    const body = { from: 'Quote', to: number('7'), text: 'dry?', clientId: `dry-${Date.now()}` };
    const before = await balance();
    const res = await api(`${V1}/sms?dryRun=true`, { token: tenant.token, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ title: 'Bad Request', status: 400, detail: expect.stringContaining('"dryRun"') });
    const bulk = await api(`${V1}/sms/bulk?dryRun=true`, { token: tenant.token, body: [body] });
    expect(bulk.status).toBe(400);
    expect(await balance()).toBe(before);
    // The clientId was never claimed: the real send is a new message, charged.
    const sent = await api(`${V1}/sms`, { token: tenant.token, body });
    expect(sent.status).toBe(201);
    expect(before - (await balance())).toBe(toMicros(0.075));
  });
});
