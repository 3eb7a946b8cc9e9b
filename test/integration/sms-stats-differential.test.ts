// GET /sms/stats (spec 3 §4.1 rule 5; docs/grammar-a.md "Statistics") against statistics
// hand-written in plain SQL over the base table, on real chdb: the product's answer (the rollup
// of closed hours, migration 0015, + sms_messages FINAL for the rest; stores/message-stats.ts)
// must equal, column for column, a computation that shares no SQL with it: the newest row of
// each id by argMax(updated_at), the filter and the groups written by hand, and the exact
// median picked from the sorted delivery times (the middle one, or the mean of the two middle
// ones); the product's median within the histograms' stated resolution (exact below 748 ms,
// otherwise within 0.07 % + 1 ms; stores/delivery-histogram.ts). Generated data with the edge cases:
//  - groups with an even (IS: 2) and an odd (MT: 3) number of delivered messages, spread over a
//    rolled hour and an open one;
//  - a group with no delivered message (NO: all pending, no rate; SE: all failed, rate 0);
//  - messages still pending (queued, sent, accepted, buffered);
//  - canceled before sent (charged, no sentAt: no cost) and canceled after sent (cost), next
//    to charged failed messages (cost);
//  - inbound messages, counted only when the filter names direction;
//  - a filter that matches nothing (no rows);
// and again after late changes (pending messages of rolled hours delivered now, without a pass,
// then after the next pass).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseUrl } from '../../core/filters/grammar-a';
import { compileStats } from '../../core/filters/grammar-a/stats';
import { fromMicros } from '../../core/money';
import type { MessageStatus, SmsMessage } from '../../core/sms/message';
import type { SmsStatsRow } from '../../core/sms/stats';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { MessageHistory } from '../../stores/message-history';
import { isoPeriod, MessageStats } from '../../stores/message-stats';
import { rolledHoursStatement } from '../../stores/stats-rollup-plan';
import { StatsRollup, STATS_ROLLUP_DEFAULTS } from '../../stores/stats-rollup';
import { coarseBucketSql, fineBucketSql, medianPlaces, medianPlacesSql, placesOfRow, subBucketMs } from '../../stores/delivery-histogram';
import { withinMedianResolution } from '../../support/median-resolution';
import { expectSameStats } from '../support/stats-expect';
import { idAt, iso, makeMessage, seededRandom } from '../../support/message-rows';

const HOUR = 3_600_000;
const ORG = 'org-d';
const PROJECTS = ['org-d-p1', 'org-d-p2'];
const FINAL = ['delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown'];
const PENDING: MessageStatus[] = ['queued', 'sent', 'accepted', 'buffered'];
const OPTIONS = { ...STATS_ROLLUP_DEFAULTS, quietMs: 0, graceMs: 0 };

let ch: ClickHouse;
let dir: string;
let history: MessageHistory;
let product: MessageStats;
let rollup: StatsRollup;
const random = seededRandom(20261127);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
/** An hour start 3 days ago: hours from there to now, the last two open (not settled). */
const NOW = Date.now();
const FROM = Math.floor((NOW - 3 * 24 * HOUR) / HOUR) * HOUR;
/** An hour rolled by the first pass, and an hour still open. */
const ROLLED_HOUR = FROM + 10 * HOUR;
const OPEN_HOUR = Math.floor(NOW / HOUR) * HOUR;
const newest: SmsMessage[] = [];

function message(at: number, over: Partial<SmsMessage>): SmsMessage {
  return makeMessage({
    id: idAt(at, random), orgId: ORG, projectId: pick(PROJECTS), createdAt: iso(at), updatedAt: iso(at),
    messagesCount: 1 + Math.floor(random() * 3), priceUserMicros: 10_000 * (1 + Math.floor(random() * 9)), ...over,
  });
}

/** The first state of a message and its newest one (delivered `deliveryMs` after creation, or another status). */
function life(at: number, status: MessageStatus, over: Partial<SmsMessage> = {}, deliveryMs = 1000): SmsMessage[] {
  const base = message(at, over);
  const sentAt = status === 'queued' || over.sentAt === null ? null : iso(at + 200);
  const last: SmsMessage = {
    ...base, status, sentAt, deliveredAt: status === 'delivered' ? iso(at + deliveryMs) : null,
    charged: status !== 'rejected', updatedAt: iso(at + Math.max(deliveryMs, 300)),
  };
  newest.push(last);
  return status === 'queued' ? [base] : [base, last];
}

/** One case: the query string and scope, and the same statistics by hand (newest-row WHERE and the group expressions). */
interface Case { qs: string; project: string | null; where: string; groups: { name: string; sql: string; time?: true }[] }

const at = (ms: number): string => `toDateTime64('${iso(ms).replace('T', ' ').replace('Z', '')}', 3, 'UTC')`;
const MID = FROM + 30 * HOUR + 17 * 60_000;
const LATE = FROM + 50 * HOUR + 41 * 60_000;
const OUT = "direction = 'outbound'";
/** Hour starts 24 and 48 hours after the data's first hour: both in closed hours. */
const EDGE_FROM = FROM + 24 * HOUR;
const EDGE_TO = FROM + 48 * HOUR;
const CASES: readonly Case[] = [
  { qs: '', project: null, where: OUT, groups: [] },
  { qs: '_group=daily', project: null, where: OUT, groups: [{ name: 'period', sql: 'toStartOfDay(created_at)', time: true }] },
  { qs: '_group=daily,country', project: null, where: OUT, groups: [{ name: 'period', sql: 'toStartOfDay(created_at)', time: true }, { name: 'country', sql: 'country' }] },
  { qs: `_group=hourly&createdAt_gte=${iso(MID)}`, project: null, where: `${OUT} AND created_at >= ${at(MID)}`, groups: [{ name: 'period', sql: 'toStartOfHour(created_at)', time: true }] },
  { qs: '_group=country,status', project: null, where: OUT, groups: [{ name: 'country', sql: 'country' }, { name: 'status', sql: 'status' }] },
  { qs: '_group=country&country_in=IS|MT|NO|SE', project: null, where: `${OUT} AND country IN ('IS', 'MT', 'NO', 'SE')`, groups: [{ name: 'country', sql: 'country' }] },
  { qs: '_group=status&direction_eq=inbound', project: null, where: "direction = 'inbound'", groups: [{ name: 'status', sql: 'status' }] },
  { qs: '_group=country&direction_in=inbound|outbound', project: null, where: "direction IN ('inbound', 'outbound')", groups: [{ name: 'country', sql: 'country' }] },
  { qs: '_group=daily,country', project: PROJECTS[1]!, where: `${OUT} AND project_id = '${PROJECTS[1]}'`, groups: [{ name: 'period', sql: 'toStartOfDay(created_at)', time: true }, { name: 'country', sql: 'country' }] },
  { qs: `_group=country&createdAt_range=${iso(MID)}|${iso(LATE)}`, project: null, where: `${OUT} AND created_at >= ${at(MID)} AND created_at <= ${at(LATE)}`, groups: [{ name: 'country', sql: 'country' }] },
  { qs: '_group=monthly,status&status_nin=delivered', project: null, where: `${OUT} AND status != 'delivered'`, groups: [{ name: 'period', sql: 'toStartOfMonth(created_at)', time: true }, { name: 'status', sql: 'status' }] },
  { qs: 'country_eq=ZZ', project: null, where: `${OUT} AND country = 'ZZ'`, groups: [] },
  // Bounds on hours' edges in closed hours: no hour is cut and no live hour is inside, so rolled hours alone answer (one part, no FINAL).
  { qs: `_group=hourly&createdAt_gte=${iso(EDGE_FROM)}&createdAt_lt=${iso(EDGE_TO)}`, project: null, where: `${OUT} AND created_at >= ${at(EDGE_FROM)} AND created_at < ${at(EDGE_TO)}`, groups: [{ name: 'period', sql: 'toStartOfHour(created_at)', time: true }] },
  { qs: `_group=daily,country&createdAt_gte=${iso(EDGE_FROM)}&createdAt_lte=${iso(EDGE_TO - 1)}`, project: null, where: `${OUT} AND created_at >= ${at(EDGE_FROM)} AND created_at <= ${at(EDGE_TO - 1)}`, groups: [{ name: 'period', sql: 'toStartOfDay(created_at)', time: true }, { name: 'country', sql: 'country' }] },
];

/** The case's statistics in plain SQL over sms_messages (no FINAL, no rollup, no compiled filter). */
async function byHand(c: Case): Promise<SmsStatsRow[]> {
  const columns = ['project_id', 'direction', 'status', 'country', 'created_at', 'messages_count', 'price_user_micros', 'charged', 'sent_at', 'delivered_at'];
  const latest = `SELECT argMax(tuple(${columns.join(', ')}), updated_at) AS t FROM ${ch.table('sms_messages')} WHERE org_id = {org:String} GROUP BY id`;
  const rows = `SELECT ${columns.map((col, i) => `tupleElement(t, ${i + 1}) AS ${col}`).join(', ')} FROM (${latest})`;
  const keys = c.groups.map((g, i) => `${g.sql} AS g${i}`);
  const query = `SELECT ${[...keys,
    'count() AS messages', 'sum(messages_count) AS segments',
    ...FINAL.map((s) => `countIf(status = '${s}') AS n_${s}`),
    `countIf(status NOT IN (${FINAL.map((s) => `'${s}'`).join(', ')})) AS pending`,
    "sumIf(price_user_micros, charged AND NOT (status = 'canceled' AND sent_at IS NULL)) AS cost_micros",
    "arraySort(groupArrayIf(dateDiff('millisecond', created_at, assumeNotNull(delivered_at)), status = 'delivered' AND delivered_at IS NOT NULL)) AS times",
  ].join(', ')} FROM (${rows}) WHERE ${c.where}${keys.length > 0 ? ` GROUP BY ${c.groups.map((_, i) => `g${i}`).join(', ')} ORDER BY ${c.groups.map((_, i) => `g${i}`).join(', ')}` : ''}`;
  const raw = await (await ch.client.query({ query, query_params: { org: ORG }, format: 'JSONEachRow' })).json<Record<string, unknown>>();
  // Totals of nothing: the plain aggregate still gives one row of zeros, as the product does.
  return raw.map((r) => {
    const num = (k: string): number => Number(r[k]);
    const messages = num('messages');
    const pending = num('pending');
    const delivered = num('n_delivered');
    const times = (r['times'] as (string | number)[]).map(Number);
    const median = times.length === 0 ? null : (times[Math.floor((times.length - 1) / 2)]! + times[Math.ceil((times.length - 1) / 2)]!) / 2;
    const out: Record<string, unknown> = {};
    c.groups.forEach((g, i) => { out[g.name] = g.time ? isoPeriod(String(r[`g${i}`])) : String(r[`g${i}`]); });
    return {
      ...out, messages, segments: num('segments'), ...Object.fromEntries(FINAL.map((s) => [s, num(`n_${s}`)])), pending,
      deliveryRate: messages - pending === 0 ? null : delivered / (messages - pending),
      cost: fromMicros(num('cost_micros')), currency: 'EUR', p50DeliverySeconds: median === null ? null : median / 1000,
    } as unknown as SmsStatsRow;
  });
}

/** `keptStale`: the sources the reader kept are out of date (rows arrived for rolled hours since): the first case finds so and reads them again. */
async function expectAllCasesEqual(keptStale = false): Promise<void> {
  for (const [i, c] of CASES.entries()) {
    const compiled = compileStats(parseUrl(new URLSearchParams(c.qs)), 'sms', { now: new Date(NOW) });
    const before = { ...product.reads };
    const mine = await product.sms({ orgId: ORG, projectId: c.project }, compiled, 'EUR');
    expectSameStats(mine, await byHand(c), { qs: c.qs, project: c.project });
    // Every case is one the rollup answers, in one read (no fallback to FINAL, no second try), on the sources the reader keeps.
    const stale = keptStale && i === 0 ? 1 : 0;
    expect({ qs: c.qs, reads: product.reads }).toEqual({ qs: c.qs, reads: { ...before, rollup: before.rollup + 1, stale: before.stale + stale } });
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chdb-stats-diff-'));
  ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'stats_diff', embeddedPath: dir });
  await migrate(ch, createLogger('warn'));
  history = new MessageHistory(ch);
  product = new MessageStats(ch);
  rollup = new StatsRollup(ch, OPTIONS);
  const rows: SmsMessage[] = [];
  for (let i = 0; i < 900; i++) {
    const when = FROM + Math.floor(random() * (NOW - FROM));
    const status = random() < 0.2 ? pick(PENDING) : pick<MessageStatus>(['delivered', 'delivered', 'delivered', 'failed', 'expired', 'rejected', 'unknown', 'error', 'canceled']);
    // Whole seconds now and then: ties in the median.
    const ms = random() < 0.3 ? 1000 * (1 + Math.floor(random() * 4)) : 1 + Math.floor(random() * 60_000);
    rows.push(...life(when, status, { country: pick(['DE', 'FR', 'GB']), text: `m ${i}` }, ms));
  }
  // Even: two delivered (2 s, 5 s: median 3.5 s), one in a rolled hour, one in the open hour.
  rows.push(...life(ROLLED_HOUR + 60_000, 'delivered', { country: 'IS' }, 2000), ...life(OPEN_HOUR + 1000, 'delivered', { country: 'IS' }, 5000));
  // Odd: three delivered (1 s, 4 s, 9 s: median 4 s).
  rows.push(...life(ROLLED_HOUR + 120_000, 'delivered', { country: 'MT' }, 9000), ...life(ROLLED_HOUR + 3 * HOUR, 'delivered', { country: 'MT' }, 1000), ...life(OPEN_HOUR + 2000, 'delivered', { country: 'MT' }, 4000));
  // No delivered message: all pending (no rate, no median), all failed (rate 0).
  rows.push(...life(ROLLED_HOUR + 5000, 'queued', { country: 'NO' }), ...life(ROLLED_HOUR + 6000, 'sent', { country: 'NO' }), ...life(OPEN_HOUR + 3000, 'accepted', { country: 'NO' }));
  rows.push(...life(ROLLED_HOUR + 7000, 'failed', { country: 'SE', priceUserMicros: 40_000 }), ...life(ROLLED_HOUR + HOUR + 7000, 'failed', { country: 'SE', priceUserMicros: 40_000 }));
  // Canceled before sent (charged, no sentAt: costs nothing) and after sent (costs its price).
  rows.push(...life(ROLLED_HOUR + 8000, 'canceled', { country: 'SE', sentAt: null, priceUserMicros: 1_000_000 }), ...life(ROLLED_HOUR + 9000, 'canceled', { country: 'SE', priceUserMicros: 30_000 }));
  // Inbound messages (two-way numbers): in the rolled and the open hours.
  for (let i = 0; i < 12; i++) {
    const when = i % 2 === 0 ? ROLLED_HOUR + i * 60_000 : OPEN_HOUR + i * 1000;
    rows.push(message(when, { direction: 'inbound', source: 'carrier', status: i % 3 === 0 ? 'stop' : 'inbound', country: pick(['DE', 'IS']), charged: false, priceUserMicros: 0 }));
  }
  await history.insert(rows);
}, 120_000);

afterAll(async () => {
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /sms/stats equals statistics hand-written in plain SQL over sms_messages (spec 3 §4.1 rule 5)', () => {
  test('after a pass: rolled closed hours and FINAL open hours, every case and edge case', async () => {
    expect((await rollup.pass()).hours).toBeGreaterThan(40);
    await expectAllCasesEqual();
    const compiled = compileStats(parseUrl(new URLSearchParams('_group=country&country_in=IS|MT|NO|SE')), 'sms', { now: new Date(NOW) });
    const rows = await product.sms({ orgId: ORG, projectId: null }, compiled, 'EUR');
    const of = (country: string): SmsStatsRow | undefined => rows.find((r) => r.country === country);
    // Even: the mean of 2 s and 5 s; odd: the middle of 1 s, 4 s, 9 s; each within the histograms' resolution.
    expect([of('IS')?.p50DeliverySeconds, withinMedianResolution(of('IS')?.p50DeliverySeconds ?? null, 3.5)]).toEqual([expect.closeTo(3.5, 2), true]);
    expect([of('MT')?.p50DeliverySeconds, withinMedianResolution(of('MT')?.p50DeliverySeconds ?? null, 4)]).toEqual([expect.closeTo(4, 2), true]);
    expect(of('NO')).toMatchObject({ messages: 3, pending: 3, deliveryRate: null, p50DeliverySeconds: null });
    expect(of('SE')).toMatchObject({ failed: 2, canceled: 2, deliveryRate: 0, p50DeliverySeconds: null, cost: fromMicros(2 * 40_000 + 30_000) });
  }, 300_000);

  test('late changes: pending messages of rolled hours delivered now, before the next pass and after it', async () => {
    const rolled = async (): Promise<number> => (await (await ch.client.query({ ...rolledHoursStatement(ch, ORG), format: 'JSONEachRow' })).json()).length;
    const before = await rolled();
    const now = Date.now();
    const late = newest.filter((m) => PENDING.includes(m.status) && Date.parse(m.createdAt) < OPEN_HOUR - 2 * HOUR).slice(0, 30)
      .map((m): SmsMessage => ({ ...m, status: 'delivered', sentAt: m.sentAt ?? iso(now), deliveredAt: iso(now), updatedAt: iso(now) }));
    expect(late.length).toBeGreaterThan(5);
    // The reader keeps the sources of this read; the late rows make them stale.
    await expectAllCasesEqual();
    await history.insert(late);
    expect(await rolled()).toBeLessThan(before);
    await expectAllCasesEqual(true);
    expect((await rollup.pass()).hours).toBeGreaterThan(0);
    // At least as many as before: an hour that settled meanwhile (the clock crossed an hour) is rolled too.
    expect(await rolled()).toBeGreaterThanOrEqual(before);
    await expectAllCasesEqual();
  }, 300_000);

  test('a message in an hour that had none, after the reader kept its sources: counted (an empty answer on kept sources is read again)', async () => {
    const compiled = compileStats(parseUrl(new URLSearchParams('_group=country&country_in=ZZ')), 'sms', { now: new Date(NOW) });
    const read = (): Promise<SmsStatsRow[]> => product.sms({ orgId: ORG, projectId: null }, compiled, 'EUR');
    expect(await read()).toEqual([]);
    // Two hours before the data's first: an hour no row of sms_messages had, so neither rolled nor live in the kept sources.
    await history.insert(life(FROM - 2 * HOUR, 'delivered', { country: 'ZZ' }, 3000));
    const before = { ...product.reads };
    expect(await read()).toEqual([expect.objectContaining({ country: 'ZZ', messages: 1, delivered: 1 })]);
    expect(product.reads).toEqual({ ...before, rollup: before.rollup + 1, stale: before.stale + 1 });
  }, 60_000);

  test('the median\'s places: ClickHouse finds the same buckets and ranks within them as medianPlaces, over 300 histograms (empty, one value, odd and even counts)', async () => {
    const hists: number[][] = [[], [0, 0, 1], [5], [0, 2, 0, 3], [1, 1], [0, 0, 0, 0, 4, 0, 0, 4]];
    while (hists.length < 300) {
      const length = 1 + Math.floor(random() * 256);
      hists.push(Array.from({ length }, () => (random() < 0.7 ? 0 : Math.floor(random() * (random() < 0.1 ? 1e6 : 20)))));
    }
    const rows = await (await ch.client.query({
      query: `SELECT i, ${medianPlacesSql('h', 'm_').join(', ')} FROM (SELECT arrayJoin(arrayEnumerate({hists:Array(Array(UInt32))})) AS i, {hists:Array(Array(UInt32))}[i] AS h) ORDER BY i`,
      query_params: { hists }, format: 'JSONEachRow',
    })).json<Record<string, unknown>>();
    expect(rows).toHaveLength(hists.length);
    rows.forEach((row, i) => {
      const expected = medianPlaces(hists[i]!);
      const { places, counts } = placesOfRow(row, 'm_');
      expect({ i, places }).toEqual({ i, places: expected });
      for (const place of places) expect(counts[place.bucket]).toBe(hists[i]![place.bucket]);
    });
  });

  test('the histograms: ClickHouse puts each delivery time in the sub-bucket whose value is the time (below 748 ms) or within 0.07 % + 1 ms of it', async () => {
    const values = [...Array.from({ length: 5000 }, (_, i) => i), ...Array.from({ length: 2000 }, () => Math.floor(random() * 2 ** 32)), 2 ** 32 - 1, 2 ** 31, 86_499_101];
    const placed = await (await ch.client.query({
      query: `SELECT ms, ${coarseBucketSql('ms')} AS b, ${fineBucketSql('ms')} AS f FROM (SELECT arrayJoin({values:Array(UInt32)}) AS ms)`,
      query_params: { values }, format: 'JSONEachRow',
    })).json<{ ms: number; b: number; f: number }>();
    expect(placed).toHaveLength(values.length);
    const off = placed.filter(({ ms, b, f }) => {
      const value = subBucketMs(Number(b), Number(f));
      return Number(ms) < 748 ? value !== Number(ms) : Math.abs(value - Number(ms)) > Number(ms) * 0.0007 + 1;
    });
    expect(off).toEqual([]);
  });
});
