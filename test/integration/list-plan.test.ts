// The list plan (stores/scoped-query.ts listRows) against real chdb, through the product's
// list path (MessageHistory.list), each answer compared with FINAL on the history table:
//  - transitions arriving out of order (the newest state first, older ones later, in separate
//    inserts with merges stopped) and again after a restart (the engine closed and reopened on
//    the same data dir, a replayed older state inserted again);
//  - a `_start` beyond the end of the result is an empty page;
//  - `containsi` finds a Greek capital match whichever rows share its block, first or last;
//  - a message that changes state between the plan's candidate read and its verification is
//    listed in its new state (it was dropped from the page before: CI, 2026-11-23).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compile, parseUrl, SMS_FIELDS } from '../../core/filters/grammar-a';
import type { SmsMessage } from '../../core/sms/message';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { MessageHistory, type Visibility } from '../../stores/message-history';
import { idAt, iso, makeMessage } from '../../support/message-rows';

const ORG: Visibility = { orgId: 'org-a', projectId: null };
const T0 = Date.UTC(2026, 10, 20, 8, 0, 0);
const log = createLogger('warn');
const dirs: string[] = [];

async function open(dir?: string): Promise<{ ch: ClickHouse; dir: string }> {
  const path = dir ?? mkdtempSync(join(tmpdir(), 'chdb-list-plan-'));
  if (dir === undefined) dirs.push(path);
  return { ch: await openClickHouse({ url: undefined, user: 'default', password: '', database: 'list_plan', embeddedPath: path }), dir: path };
}

afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

/** A message's states: queued, sent, then delivered or failed (by its index), one second apart. */
function lifeOf(i: number): SmsMessage[] {
  const createdAt = iso(T0 + i * 60_000);
  const base = makeMessage({ id: idAt(T0 + i * 60_000), createdAt, text: i % 3 === 0 ? 'ΚΩΔΙΚΌΣ code' : `Your code is ${i}`, country: i % 2 === 0 ? 'DE' : 'FR' });
  const at = (s: number): string => iso(T0 + i * 60_000 + s * 1000);
  return [
    base,
    { ...base, status: 'sent', sentAt: at(1), updatedAt: at(1) },
    { ...base, status: i % 4 === 0 ? 'failed' : 'delivered', statusCode: i % 4 === 0 ? 5 : 0, sentAt: at(1), deliveredAt: at(2), updatedAt: at(2) },
  ];
}

async function truth(ch: ClickHouse, qs: string): Promise<string[]> {
  const c = compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS);
  const result = await ch.client.query({
    query: `SELECT id, status FROM ${ch.table('sms_messages')} FINAL WHERE org_id = {__org:String} AND (${c.where})
            ORDER BY ${c.orderBy} LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
    query_params: { ...c.params, __org: ORG.orgId, __limit: c.limit, __offset: c.offset },
    format: 'JSONEachRow',
  });
  return (await result.json<{ id: string; status: string }>()).map((r) => `${r.id}/${r.status}`);
}

const listed = async (ch: ClickHouse, qs: string): Promise<string[]> =>
  (await new MessageHistory(ch).list(ORG, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS))).map((m) => `${m.id}/${m.status}`);

const QUERIES = [
  '', 'status_eq=delivered', 'status_eq=sent', 'status_eq=queued', 'status_in=failed|sent&_start=2&_limit=3', 'country_eq=DE&_start=1&_limit=4',
  `text_containsi=${encodeURIComponent('κωδικό')}`, '_sort=createdAt:+&_start=5&_limit=5', '_sort=status,createdAt', `createdAt_gte=${iso(T0 + 10 * 60_000)}`,
  '_start=0&_limit=1000',
];

async function expectTruth(ch: ClickHouse): Promise<void> {
  for (const qs of QUERIES) {
    const expected = await truth(ch, qs);
    expect(await listed(ch, qs)).toEqual(expected);
  }
}

describe('transitions out of order and after a restart', () => {
  const lives = Array.from({ length: 24 }, (_, i) => lifeOf(i));

  test('the newest state first, older states later: lists show the newest state, as FINAL does', async () => {
    const { ch, dir } = await open();
    await migrate(ch, log);
    await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table('sms_messages')}` });
    const history = new MessageHistory(ch);
    await history.insert(lives.map((l) => l[2] as SmsMessage));
    await history.insert(lives.map((l) => l[0] as SmsMessage));
    await history.insert(lives.map((l) => l[1] as SmsMessage));
    await expectTruth(ch);
    expect(await listed(ch, 'status_in=queued|sent')).toEqual([]);
    expect((await listed(ch, '_start=0&_limit=1000')).length).toBe(24);
    await ch.close();

    // Restart: the same data dir, a replayed older state arrives again, merges allowed.
    const again = (await open(dir)).ch;
    await migrate(again, log);
    await new MessageHistory(again).insert(lives.map((l) => l[1] as SmsMessage));
    await expectTruth(again);
    expect(await listed(again, 'status_eq=sent')).toEqual([]);
    await again.client.command({ query: `OPTIMIZE TABLE ${again.table('sms_messages')} FINAL` });
    await expectTruth(again);
    await again.close();
  }, 120_000);
});

describe('pages', () => {
  test('a _start beyond the end is an empty page; the last rows are a short page', async () => {
    const { ch } = await open();
    await migrate(ch, log);
    await new MessageHistory(ch).insert(Array.from({ length: 7 }, (_, i) => lifeOf(i)[2] as SmsMessage));
    expect(await listed(ch, '_start=5&_limit=5')).toHaveLength(2);
    expect(await listed(ch, '_start=7&_limit=5')).toEqual([]);
    expect(await listed(ch, '_start=100000&_limit=1000')).toEqual([]);
    await expectTruth(ch);
    await ch.close();
  }, 60_000);

  test.each([['first', true], ['last', false]])('containsi finds a Greek capital match when it is the %s row of its block', async (_, first) => {
    const { ch } = await open();
    await migrate(ch, log);
    // positionCaseInsensitiveUTF8 missed the Greek row when it started a block.
    const others = ['Your code is 1234', 'Votre code: ÉTÉ 2026', 'ÜBER straße', 'Hello 👋 world', `O'Brien said "hi"`, 'code 9999', 'ciao%_\\', 'Order ready'];
    const texts = first ? ['ΚΩΔΙΚΌΣ code', ...others] : [...others, 'ΚΩΔΙΚΌΣ code'];
    await new MessageHistory(ch).insert(texts.map((text, i) => ({ ...(lifeOf(i)[2] as SmsMessage), text, deliveredText: text })));
    const found = await new MessageHistory(ch).list(ORG, compile(parseUrl(new URLSearchParams(`text_containsi=${encodeURIComponent('κωδικό')}`)), SMS_FIELDS));
    expect(found.map((m) => m.text)).toEqual(['ΚΩΔΙΚΌΣ code']);
    await ch.close();
  }, 60_000);
});

describe('a state written while a page is read', () => {
  /** The engine, with `between` run once right after the first candidate read of sms_messages returns. */
  function interposed(ch: ClickHouse, between: () => Promise<void>): ClickHouse {
    let done = false;
    const query: typeof ch.client.query = async (params) => {
      const result = await ch.client.query(params);
      if (!done && /FROM\s+\S*sms_messages\S*\s+WHERE[\s\S]*ORDER BY[\s\S]*LIMIT/.test(params.query)) {
        done = true;
        await between();
      }
      return result;
    };
    const client = new Proxy(ch.client, { get: (target, key) => (key === 'query' ? query : Reflect.get(target, key)) });
    return { ...ch, client, table: (name) => ch.table(name) };
  }

  test.each(['', '_start=2&_limit=2', 'status_eq=queued'])('list %p: the changed message is listed in its new state where that matches, as FINAL shows it', async (qs) => {
    const { ch } = await open();
    await migrate(ch, log);
    const now = Date.now();
    const queued = Array.from({ length: 4 }, (_, i) => makeMessage({ createdAt: iso(now - (4 - i) * 1000), updatedAt: iso(now - (4 - i) * 1000) }));
    const history = new MessageHistory(ch);
    await history.insert(queued);
    const oldest = queued[0] as SmsMessage;
    const sent: SmsMessage = { ...oldest, status: 'sent', sentAt: iso(now), updatedAt: iso(now) };
    const view = interposed(ch, () => history.insert([sent]));
    try {
      const found = (await new MessageHistory(view).list(ORG, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS))).map((m) => `${m.id}/${m.status}`);
      expect(found).toEqual(await truth(ch, qs));
      expect(found.filter((f) => f.startsWith(oldest.id))).toEqual(qs === 'status_eq=queued' ? [] : [`${oldest.id}/sent`]);
    } finally {
      await ch.close();
    }
  }, 60_000);
});
