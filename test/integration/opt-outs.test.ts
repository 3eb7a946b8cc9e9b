// A project's opt-out list end to end (DESIGN §4 "Two-way", spec 1 §6): STOP and START sent by a
// handset through the carrier simulator (simulator.mo), the list at /transactional/v1/opt-outs
// (GET, POST, DELETE) with tenant isolation, and the admin CLI's `opt-out list|add|remove`.
// Sends are checked against each process's KV mirror of the opt-outs, so the tests wait for the
// quote (priced and checked like a send, nothing charged) to change before asserting the send.
import { eventually } from '../../support/eventually';
import { admin, api } from '../../support/stack';
import { accountsMirrored, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';

type Res = Awaited<ReturnType<typeof api>>;
interface Entry { number: string; since: string; source: string; keyword?: string }

let a: Tenant;
let b: Tenant;
let ours: string;

beforeAll(async () => {
  [a, b] = await Promise.all([createTenant({ name: 'Opt-out Org A', balance: 50 }), createTenant({ name: 'Opt-out Org B', balance: 50 })]);
  ours = `+4915550${String(Date.now() % 1000000).padStart(6, '0')}`;
  await withAccounts(async (accounts) => { await accounts.addNumber(a.tokenId, ours); });
  await accountsMirrored();
}, 60_000);

let counter = 0;
/** A German mobile number of its own per call. */
function handset(): string {
  counter += 1;
  return `+491517${String(Date.now() % 100000).padStart(5, '0')}${String(counter).padStart(2, '0')}`;
}

const body = (to: string): Record<string, unknown> => ({ from: 'OptOuts', to, text: 'opt-out test' });
const quote = (t: Tenant, to: string): Promise<Res> => api(`${V1}/sms/quote`, { token: t.token, body: body(to) });
const send = (t: Tenant, to: string): Promise<Res> => api(`${V1}/sms`, { token: t.token, body: body(to) });
const list = async (t: Tenant, query = ''): Promise<Entry[]> => {
  const res = await api(`${V1}/opt-outs${query}`, { token: t.token });
  expect(res.status).toBe(200);
  return (res.body as { entities: Entry[] }).entities;
};
/** Until the product's mirror refuses (`refused`) or takes sends to `to` again. */
const mirrored = (t: Tenant, to: string, refused: boolean): Promise<Res> =>
  eventually(() => quote(t, to), { what: `sends to ${to} ${refused ? 'refused' : 'accepted'}`, until: (r) => r.status === (refused ? 422 : 200), timeoutMs: 20_000 });

async function mo(from: string, text: string): Promise<void> {
  await withAccounts(async (_a, _b, nats) => {
    const reply = await nats.nc.request('simulator.mo', JSON.stringify({ from, to: ours, text }), { timeout: 5000 });
    expect(reply.json<{ ok: boolean }>().ok).toBe(true);
  });
}

const OPTED_OUT = { errors: { fields: { to: [expect.stringMatching(/opted out/)] } } };

describe('DESIGN §4 Two-way: keywords from a handset', () => {
  test('STOP opts the handset out (422 on `to`, listed with its keyword); "start again" opts it back in (sent again, unlisted)', async () => {
    const phone = handset();
    await mo(phone, '  Stop please');
    await mirrored(a, phone, true);
    const refused = await send(a, phone);
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual(OPTED_OUT);
    expect((await list(a)).find((e) => e.number === phone)).toMatchObject({ number: phone, source: 'keyword', keyword: 'STOP', since: expect.any(String) });

    await mo(phone, 'start again');
    await mirrored(a, phone, false);
    expect((await send(a, phone)).status).toBe(201);
    expect((await list(a)).some((e) => e.number === phone)).toBe(false);
  }, 60_000);
});

describe('DESIGN §4 Two-way: HELP', () => {
  test('with a help text set (admin token help-text), HELP gets it as an ordinary message from our number, charged like a send', async () => {
    const phone = handset();
    const helpText = `Opt-out test help ${Date.now()}. Reply STOP to stop.`;
    expect(await admin('token', 'help-text', '--token', a.token, '--text', helpText)).toEqual({ id: a.tokenId, helpText });
    await accountsMirrored();
    await mo(phone, 'Help');
    const reply = await eventually(async () => {
      const res = await api(`${V1}/sms?_start=0&_limit=1000`, { token: a.token });
      return (res.body as { entities: Array<Record<string, unknown>> }).entities.find((m) => m['text'] === helpText);
    }, { what: 'the HELP reply in the message history', until: (m) => m !== undefined, timeoutMs: 30_000 });
    expect(reply).toMatchObject({ from: ours, normalizedTo: phone, text: helpText, clientId: expect.stringMatching(/^help-/), charged: true, priceUser: 0.075 });
    expect(await admin('token', 'help-text', '--token', a.token, '--clear')).toEqual({ id: a.tokenId, helpText: null });
  }, 60_000);
});

describe('DESIGN §4 Two-way: /transactional/v1/opt-outs', () => {
  test('POST adds (201, then sends are a 422 on `to`), GET lists it, DELETE removes (204, then 404) and sends go again', async () => {
    const phone = handset();
    const added = await api(`${V1}/opt-outs`, { token: a.token, body: { to: phone } });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ entity: { number: phone, since: expect.any(String), source: 'api' } });
    expect(added.headers.get('x-ratelimit-limit')).not.toBeNull();
    await mirrored(a, phone, true);
    expect((await send(a, phone)).body).toEqual(OPTED_OUT);
    expect((await list(a)).find((e) => e.number === phone)).toEqual({ number: phone, since: (added.body as { entity: Entry }).entity.since, source: 'api' });

    const removed = await api(`${V1}/opt-outs/${encodeURIComponent(phone)}`, { method: 'DELETE', token: a.token });
    expect(removed.status).toBe(204);
    const again = await api(`${V1}/opt-outs/${phone}`, { method: 'DELETE', token: a.token });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ status: 404, title: 'Not Found', detail: expect.any(String) });
    await mirrored(a, phone, false);
    expect((await send(a, phone)).status).toBe(201);
  }, 60_000);

  test('a `to` a send would refuse is a 422 on `to`, an unknown field a 422 on it; nothing is added', async () => {
    const before = await list(a);
    for (const [payload, field] of [[{ to: '12' }, 'to'], [{}, 'to'], [{ to: 5 }, 'to'], [{ to: handset(), why: 'x' }, 'why']] as const) {
      const res = await api(`${V1}/opt-outs`, { token: a.token, body: payload });
      expect(res.status).toBe(422);
      expect(Object.keys((res.body as { errors: { fields: Record<string, unknown> } }).errors.fields)).toEqual([field]);
    }
    expect(await list(a)).toEqual(before);
  });

  test('paging: _start with _limit, sorted by number; _start alone or a filter is a 400', async () => {
    const phones = [handset(), handset(), handset()];
    for (const to of phones) expect((await api(`${V1}/opt-outs`, { token: a.token, body: { to } })).status).toBe(201);
    const all = (await list(a)).map((e) => e.number);
    expect(all).toEqual([...all].sort());
    const at = all.indexOf(phones[1] as string);
    expect((await list(a, `?_start=${at}&_limit=1`)).map((e) => e.number)).toEqual([phones[1]]);
    for (const query of ['?_start=1', '?_limit=0&_start=0', '?number_eq=1']) {
      const res = await api(`${V1}/opt-outs${query}`, { token: a.token });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 400, detail: expect.any(String) });
    }
  });

  test('tenant isolation: another organization\'s token lists none of it and cannot remove it (404)', async () => {
    const phone = handset();
    expect((await api(`${V1}/opt-outs`, { token: a.token, body: { to: phone } })).status).toBe(201);
    expect((await list(b)).some((e) => e.number === phone)).toBe(false);
    const foreign = await api(`${V1}/opt-outs/${encodeURIComponent(phone)}`, { method: 'DELETE', token: b.token });
    expect(foreign.status).toBe(404);
    expect((await list(a)).some((e) => e.number === phone)).toBe(true);
    // B's project is not A's: B may still send to the number.
    expect((await quote(b, phone)).status).toBe(200);
  });

  test('the document lists the three operations', async () => {
    const doc = (await api('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths['/opt-outs'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/opt-outs/{number}'] ?? {})).toEqual(['delete']);
  });
});

describe('DESIGN §4 Two-way: admin opt-out list|add|remove', () => {
  test('add, list and remove through the CLI act on the token\'s project, as the API sees it', async () => {
    const phone = handset();
    const added = await admin<{ number: string; source: string }>('opt-out', 'add', '--token', a.token, '--number', phone);
    expect(added).toMatchObject({ number: phone, source: 'api' });
    expect((await list(a)).some((e) => e.number === phone)).toBe(true);
    const listed = await admin<Entry[]>('opt-out', 'list', '--token', a.tokenId);
    expect(listed.some((e) => e.number === phone)).toBe(true);
    expect(await admin('opt-out', 'remove', '--token', a.token, '--number', phone)).toMatchObject({ number: phone, removed: true });
    expect((await list(a)).some((e) => e.number === phone)).toBe(false);
    await expect(admin('opt-out', 'remove', '--token', a.token, '--number', phone)).rejects.toThrow(/not opted out/);
  }, 60_000);
});
