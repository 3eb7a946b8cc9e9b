// The rollup of closed hours behind GET /sms/stats (spec 3 §4.1 rule 5; migration 0015,
// stores/message-stats.ts, pipelines/stats-rollup.ts) against real chdb: for random Grammar A
// filters, `_group`s, scopes and pages, the product's answer (rollup for rolled whole hours +
// sms_messages FINAL for every other hour) equals, row for row and column for column, the plain
// FINAL statement — over generated messages spanning closed and open hours:
//  - right after a pass (closed hours rolled, the last hours open);
//  - after late changes: new states of messages in rolled hours and in the open window, new
//    messages created in a rolled hour, a delivery time the rollup cannot hold (before createdAt),
//    all without a pass (their hours are read FINAL) and again after the next pass (rolled anew);
//  - after superseded generations are deleted.
// It also shows that the answer is read from the rollup (a planted rollup row changes it) and
// which filters fall back to FINAL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseUrl } from '../../core/filters/grammar-a';
import { compileStats } from '../../core/filters/grammar-a/stats';
import type { MessageStatus, SmsMessage } from '../../core/sms/message';
import type { SmsStatsRow } from '../../core/sms/stats';
import { migrate, openClickHouse, type ClickHouse } from '../../infra/clickhouse';
import { createLogger } from '../../infra/logger';
import { MessageHistory } from '../../stores/message-history';
import { subBucketMs, UNKNOWN_PLACE } from '../../stores/delivery-histogram';
import { MessageStats } from '../../stores/message-stats';
import { rolledHoursStatement, rollupPlan } from '../../stores/stats-rollup-plan';
import { StatsRollup, STATS_ROLLUP_DEFAULTS } from '../../stores/stats-rollup';
import { expectSameStats } from '../support/stats-expect';
import { eventually } from '../../support/eventually';
import { idAt, iso, makeMessage, seededRandom } from '../../support/message-rows';

const HOUR = 3_600_000;
const ORG = 'org-r';
const PROJECTS = ['org-r-p1', 'org-r-p2'];
const COUNTRIES = ['DE', 'FR', 'GB', 'US'];
const FINALS: MessageStatus[] = ['delivered', 'delivered', 'delivered', 'failed', 'expired', 'rejected', 'unknown', 'canceled', 'error'];
const PENDING: MessageStatus[] = ['queued', 'sent', 'accepted', 'buffered'];

// No insert runs while a pass reads (the test inserts, then passes): a quiet period of 0 is safe here.
const OPTIONS = { ...STATS_ROLLUP_DEFAULTS, quietMs: 0, graceMs: 0 };

let ch: ClickHouse;
let dir: string;
let history: MessageHistory;
let product: MessageStats;
let plain: MessageStats;
let rollup: StatsRollup;
const random = seededRandom(20261126);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
/** Now, when the data was generated: hours from now-5d to now (the last settle hour open). */
const NOW = Date.now();
const FROM = NOW - 5 * 24 * HOUR;
const messages: SmsMessage[] = [];

/** A message created at `at`: its first state, and its newest (pending or final). */
function lifeAt(at: number, i: number): SmsMessage[] {
  const base = makeMessage({
    id: idAt(at, random), orgId: ORG, projectId: pick(PROJECTS), country: pick(COUNTRIES), createdAt: iso(at), updatedAt: iso(at),
    messagesCount: 1 + Math.floor(random() * 3), priceUserMicros: 10_000 * (1 + Math.floor(random() * 9)), text: `msg ${i}`,
  });
  const status = random() < 0.15 ? pick(PENDING) : pick(FINALS);
  // Some delivery times repeat (whole seconds), so the median meets ties.
  const doneAt = at + (random() < 0.3 ? 1000 * (1 + Math.floor(random() * 5)) : 1 + Math.floor(random() * 90_000));
  const newest: SmsMessage = { ...base, status, sentAt: status === 'queued' ? null : iso(at + 500), deliveredAt: status === 'delivered' ? iso(doneAt) : null, charged: status !== 'rejected', updatedAt: iso(doneAt) };
  return status === 'queued' ? [base] : [base, newest];
}

function randomQuery(): { qs: string; project: string | null } {
  const parts: string[] = [];
  const group = [pick(['', '', 'hourly', 'daily', 'monthly']), ...(random() < 0.5 ? ['country'] : []), ...(random() < 0.4 ? ['status'] : [])].filter(Boolean);
  if (random() < 0.3) group.reverse();
  if (group.length > 0) parts.push(`_group=${group.join(',')}`);
  const instant = (): string => new Date(FROM + Math.floor(random() * (NOW - FROM + 2 * HOUR)) - (random() < 0.3 ? (NOW % HOUR) : 0)).toISOString();
  const filters = [
    () => `createdAt_gte=${instant()}`, () => `createdAt_gt=${instant()}`, () => `createdAt_lt=${instant()}`, () => `createdAt_lte=${instant()}`,
    () => `createdAt_range=${[instant(), instant()].sort().join('|')}`, () => `createdAt_betweeneq=${[instant(), instant()].sort().join('|')}`,
    () => `createdAt_gte=${pick(['2 days ago', '26 hours ago', '90 minutes ago', '3 days ago'])}`,
    () => `country_eq=${pick(COUNTRIES)}`, () => `country_in=${pick(COUNTRIES)}|${pick(COUNTRIES)}`, () => `country_nin=${pick(COUNTRIES)}`,
    () => `status_eq=${pick([...FINALS, ...PENDING])}`, () => `status_in=delivered|${pick(PENDING)}`, () => `status_nin=delivered`,
    // A key given twice is an OR of its conditions.
    () => `country_eq=${pick(COUNTRIES)}&country_eq=${pick(COUNTRIES)}`, () => `status_eq=failed&status_eq=${pick(PENDING)}`,
    () => `createdAt_gte=${instant()}&createdAt_gte=${instant()}`,
    // Not answerable by the rollup: FINAL alone.
    () => `text_containsi=${Math.floor(random() * 9)}`, () => 'messagesCount_gte=2', () => `createdAt_ne=${instant()}`,
  ];
  const n = Math.floor(random() * 3);
  for (let i = 0; i < n; i++) parts.push(pick(filters)());
  if (random() < 0.2) parts.push(`_start=${Math.floor(random() * 5)}&_limit=${1 + Math.floor(random() * 20)}`);
  const project = random() < 0.3 ? pick(PROJECTS) : null;
  if (random() < 0.1) {
    // An OR across fields (JSON form only): on dimensions, or with a field the rollup lacks.
    const other = random() < 0.5 ? { field: 'status', operator: 'eq', value: 'failed' } : { field: 'messagesCount', operator: 'gt', value: 1 };
    const filter = [{ field: '', operator: 'or', value: [{ field: 'country', operator: 'eq', value: pick(COUNTRIES) }, other] }];
    return { qs: `_q=${encodeURIComponent(JSON.stringify({ filter, ...(group.length > 0 ? { group: group.join(',') } : {}) }))}`, project };
  }
  return { qs: parts.join('&'), project };
}

async function answers(qs: string, project: string | null): Promise<{ mine: SmsStatsRow[]; truth: SmsStatsRow[] }> {
  const compiled = compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now: new Date(NOW) });
  const v = { orgId: ORG, projectId: project };
  return { mine: await product.sms(v, compiled, 'EUR'), truth: await plain.sms(v, compiled, 'EUR') };
}

async function expectSameForRandomQueries(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { qs, project } = randomQuery();
    const { mine, truth } = await answers(qs, project);
    // The query string in the message names the case that differed.
    expectSameStats(mine, truth, { qs, project });
  }
}

async function rolledHours(): Promise<number> {
  return (await (await ch.client.query({ ...rolledHoursStatement(ch, ORG), format: 'JSONEachRow' })).json()).length;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'chdb-stats-rollup-'));
  ch = await openClickHouse({ url: undefined, user: 'default', password: '', database: 'stats_rollup', embeddedPath: dir });
  await migrate(ch, createLogger('warn'));
  history = new MessageHistory(ch);
  product = new MessageStats(ch);
  plain = new MessageStats(ch, undefined, { rollup: false });
  rollup = new StatsRollup(ch, OPTIONS);
  const rows: SmsMessage[] = [];
  for (let i = 0; i < 2400; i++) {
    const life = lifeAt(FROM + Math.floor(random() * (NOW - FROM)), i);
    rows.push(...life);
    messages.push(life[life.length - 1]!);
  }
  // A delivery time before createdAt (a carrier's clock): the rollup's state cannot hold it.
  const early = makeMessage({ id: idAt(FROM + 7 * HOUR + 60_000, random), orgId: ORG, projectId: PROJECTS[0], createdAt: iso(FROM + 7 * HOUR + 60_000), status: 'delivered', deliveredAt: iso(FROM + 7 * HOUR), updatedAt: iso(FROM + 7 * HOUR + 90_000) });
  rows.push(early);
  await history.insert(rows);
}, 120_000);

afterAll(async () => {
  await ch.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /sms/stats from the rollup of closed hours (spec 3 §4.1 rule 5)', () => {
  test('a pass rolls the closed hours, not the open ones, and a second pass has nothing to do', async () => {
    const first = await rollup.pass();
    // About 5 days of hours; the hours that ended less than settleMs ago stay open.
    expect(first.hours).toBeGreaterThan(100);
    expect(first.hours).toBeLessThanOrEqual(5 * 24);
    expect(await rolledHours()).toBe(first.hours);
    // Every day that ended settleMs ago is summed from its hours (migration 0018).
    expect(first.days).toBeGreaterThanOrEqual(3);
    const second = await rollup.pass();
    expect([second.hours, second.days]).toEqual([0, 0]);
  }, 120_000);

  test('equals the plain FINAL answer for random filters, groups, scopes and pages', async () => {
    await expectSameForRandomQueries(80);
  }, 300_000);

  test('the answer comes from the rollup: a row planted in the current generation of an hour or a day shows in it (and FINAL-only filters ignore it)', async () => {
    // From a day after the first hour: the hour of the message delivered before its creation (read FINAL) is outside.
    const since = `createdAt_gte=${iso(FROM + 24 * HOUR)}`;
    const sinceSql = iso(FROM + 48 * HOUR).replace('T', ' ').replace('Z', '');
    const currentRow = async (table: string, markers: string, at: string): Promise<Record<string, unknown>> => {
      const [row] = await (await ch.client.query({
        query: `SELECT created_at, generation FROM ${ch.table(table)} WHERE org_id = {org:String} AND created_at >= {since:DateTime64(3, 'UTC')}
                  AND (created_at, generation) IN (SELECT ${at}, max(generation) FROM ${ch.table(markers)} WHERE org_id = {org:String} GROUP BY ${at}) ORDER BY created_at LIMIT 1`,
        query_params: { org: ORG, since: sinceSql }, format: 'JSONEachRow',
      })).json<Record<string, unknown>>();
      expect(row).toBeDefined();
      return row!;
    };
    // 1000 messages without delivery times (a planted delivery time would miss its sub-buckets: the read falls back to FINAL).
    const planted: Record<string, string> = {
      sms_stats_hourly: 'org_id, created_at, generation, project_id, direction, country, status, 1000, 0, 0, [], 0',
      sms_stats_daily: 'org_id, created_at, generation, project_id, direction, country, status, 1000, 0, 0, [], 0, 65535, 65535',
      sms_stats_daily_org: 'org_id, created_at, generation, direction, country, status, 1000, 0, 0, [], 0, 65535, 65535',
    };
    const plant = async (table: string, row: Record<string, unknown>): Promise<void> => {
      await ch.client.command({
        query: `INSERT INTO ${ch.table(table)} SELECT ${planted[table]!}
                FROM ${ch.table(table)} WHERE org_id = {org:String} AND created_at = {at:DateTime64(3, 'UTC')} AND generation = {g:UInt64} LIMIT 1`,
        query_params: { org: ORG, at: row['created_at'], g: row['generation'] },
      });
    };
    const total = (rows: readonly SmsStatsRow[]): number => rows.reduce((sum, r) => sum + r.messages, 0);
    const before = await answers(since, null);
    const beforeOfProject = await answers(since, PROJECTS[0]!);
    const beforeHourly = await answers(`${since}&_group=hourly`, null);
    // A summed day answers the totals: account-wide its rows summed over projects (migration 0022), of one project its rows by project;
    // grouped by hour, the hours answer (days cannot).
    await plant('sms_stats_daily_org', await currentRow('sms_stats_daily_org', 'sms_stats_days', 'day'));
    expect(total((await answers(since, null)).mine)).toBe(total(before.mine) + 1000);
    expect(total((await answers(since, PROJECTS[0]!)).mine)).toBe(total(beforeOfProject.mine));
    await plant('sms_stats_daily', await currentRow('sms_stats_daily', 'sms_stats_days', 'day'));
    expect(total((await answers(since, null)).mine)).toBe(total(before.mine) + 1000);
    expect(total((await answers(`${since}&_group=hourly`, null)).mine)).toBe(total(beforeHourly.mine));
    await plant('sms_stats_hourly', await currentRow('sms_stats_hourly', 'sms_stats_hours', 'hour'));
    const after = await answers(`${since}&_group=hourly`, null);
    expect(total(after.mine)).toBe(total(beforeHourly.mine) + 1000);
    expect(after.truth).toEqual(beforeHourly.truth);
    // text is not in the rollup: that query reads FINAL and is unchanged.
    const text = await answers('text_containsi=msg', null);
    expect(text.mine).toEqual(text.truth);
    for (const table of ['sms_stats_daily', 'sms_stats_daily_org', 'sms_stats_hourly']) {
      await ch.client.command({ query: `ALTER TABLE ${ch.table(table)} DELETE WHERE org_id = {org:String} AND messages = 1000 SETTINGS mutations_sync = 1`, query_params: { org: ORG } });
    }
    expectSameStats((await answers(since, null)).mine, before.truth, { since });
  }, 120_000);

  test('grouped by day and country, a summed day\'s group takes its row\'s stored median (migration 0022); a place not known merges the histograms', async () => {
    await rollup.pass();
    const qs = `_group=daily,country&createdAt_gte=${iso(FROM + 24 * HOUR)}`;
    const compiled = compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now: new Date(NOW) });
    const reader = new MessageStats(ch);
    for (const project of [null, PROJECTS[1]!]) {
      const v = { orgId: ORG, projectId: project };
      expectSameStats(await reader.sms(v, compiled, 'EUR'), await plain.sms(v, compiled, 'EUR'), { qs, project });
    }
    expect(reader.reads).toMatchObject({ rollup: 2, merged: 0, final: 0 });
    // A current day row summed over projects, with delivery times, of a day the bound leaves whole.
    const [row] = await (await ch.client.query({
      query: `SELECT toString(created_at) AS at, generation, country, median_lo, median_hi FROM ${ch.table('sms_stats_daily_org')}
              WHERE org_id = {org:String} AND notEmpty(delivery_hist) AND created_at >= {since:DateTime64(3, 'UTC')}
                AND (created_at, generation) IN (SELECT day, max(generation) FROM ${ch.table('sms_stats_days')} WHERE org_id = {org:String} GROUP BY day)
              ORDER BY created_at LIMIT 1`,
      query_params: { org: ORG, since: iso(FROM + 48 * HOUR).replace('T', ' ').replace('Z', '') }, format: 'JSONEachRow',
    })).json<{ at: string; generation: string; country: string; median_lo: number; median_hi: number }>();
    expect(row).toBeDefined();
    const setPlaces = async (lo: number, hi: number): Promise<void> => {
      await ch.client.command({
        query: `ALTER TABLE ${ch.table('sms_stats_daily_org')} UPDATE median_lo = {lo:UInt16}, median_hi = {hi:UInt16}
                WHERE org_id = {org:String} AND toString(created_at) = {at:String} AND generation = {g:UInt64} AND country = {country:String} AND notEmpty(delivery_hist) SETTINGS mutations_sync = 1`,
        query_params: { org: ORG, at: row!.at, g: row!.generation, country: row!.country, lo, hi },
      });
    };
    const groupOf = (rows: readonly SmsStatsRow[]): SmsStatsRow | undefined => rows.find((r) => r.period === `${row!.at.slice(0, 10)}T00:00:00.000Z` && r.country === row!.country);
    const v = { orgId: ORG, projectId: null };
    try {
      // Places near 1 s and 3 s planted: the group's median is read from them, not from its histogram.
      await setPlaces(79 * 64 + 48, 92 * 64 + 43);
      const planted = groupOf(await reader.sms(v, compiled, 'EUR'));
      expect(planted?.p50DeliverySeconds).toBe((subBucketMs(79, 48) + subBucketMs(92, 43)) / 2 / 1000);
      // A place not known: the read starts again with the histograms merged, and equals FINAL.
      await setPlaces(UNKNOWN_PLACE, row!.median_hi);
      expectSameStats(await reader.sms(v, compiled, 'EUR'), await plain.sms(v, compiled, 'EUR'), { qs, project: null });
      expect(reader.reads.merged).toBe(1);
    } finally {
      await setPlaces(row!.median_lo, row!.median_hi);
    }
    expectSameStats(await reader.sms(v, compiled, 'EUR'), await plain.sms(v, compiled, 'EUR'), { qs, project: null });
    expect(reader.reads.merged).toBe(1);
  }, 120_000);

  test('a day summed by an earlier rollup (by project only, levels 1) is read from its hours account-wide, and summed again by the next pass', async () => {
    await rollup.pass();
    // Kept sources may pin generations a pass deleted (grace 0 here; the product keeps sources 30 s and deletes after 600 s): a new reader.
    product = new MessageStats(ch);
    const day = async (): Promise<{ at: string; levels: number }> => (await (await ch.client.query({
      query: `SELECT toString(day) AS at, argMax(levels, generation) AS levels FROM ${ch.table('sms_stats_days')} WHERE org_id = {org:String} AND day >= {since:DateTime64(3, 'UTC')} GROUP BY day ORDER BY day LIMIT 1`,
      query_params: { org: ORG, since: iso(FROM + 48 * HOUR).replace('T', ' ').replace('Z', '') }, format: 'JSONEachRow',
    })).json<{ at: string; levels: number }>())[0]!;
    const summed = await day();
    expect(summed.levels).toBe(2);
    // What a rollup of an earlier version leaves: the marker at level 1, no rows over projects.
    await ch.client.command({ query: `ALTER TABLE ${ch.table('sms_stats_days')} UPDATE levels = 1 WHERE org_id = {org:String} AND toString(day) = {day:String} SETTINGS mutations_sync = 1`, query_params: { org: ORG, day: summed.at } });
    await ch.client.command({ query: `ALTER TABLE ${ch.table('sms_stats_daily_org')} DELETE WHERE org_id = {org:String} AND toString(created_at) = {day:String} SETTINGS mutations_sync = 1`, query_params: { org: ORG, day: summed.at } });
    for (const qs of ['_group=daily,country', '_group=monthly,status', '']) {
      const { mine, truth } = await answers(`${qs}&createdAt_gte=${iso(FROM + 24 * HOUR)}`, null);
      expectSameStats(mine, truth, { qs, project: null });
    }
    const pass = await rollup.pass();
    expect(pass.days).toBe(1);
    expect((await day()).levels).toBe(2);
    product = new MessageStats(ch);
    await expectSameForRandomQueries(10);
  }, 120_000);

  test('late status changes and late messages in rolled and open hours: exact before the next pass (read FINAL) and after it (rolled anew)', async () => {
    const rolledBefore = await rolledHours();
    const late: SmsMessage[] = [];
    const nowIso = iso(Date.now());
    // Pending messages of rolled (old) hours and of the open window reach a final status now.
    for (const m of messages.filter((x) => PENDING.includes(x.status)).slice(0, 60)) {
      late.push({ ...m, status: 'delivered', deliveredAt: nowIso, updatedAt: nowIso });
    }
    // Messages created in old, rolled hours arrive only now (a writer's backlog).
    for (let i = 0; i < 20; i++) {
      const at = FROM + (10 + i * 3) * HOUR + 1234;
      late.push(...lifeAt(at, 10_000 + i));
    }
    await history.insert(late);
    expect(await rolledHours()).toBeLessThan(rolledBefore);
    await expectSameForRandomQueries(40);
    const again = await rollup.pass();
    expect(again.hours).toBeGreaterThan(0);
    // The days of the re-rolled hours are summed again (their sources changed).
    expect(again.days).toBeGreaterThan(0);
    expect(await rolledHours()).toBe(rolledBefore);
    await expectSameForRandomQueries(40);
  }, 300_000);

  test('superseded generations are deleted after their grace period and answers stay exact', async () => {
    const generations = async (): Promise<number> => {
      let most = 0;
      for (const table of ['sms_stats_hourly', 'sms_stats_hourly_fine', 'sms_stats_daily', 'sms_stats_daily_org', 'sms_stats_daily_fine']) {
        most = Math.max(most, Number((await (await ch.client.query({
          query: `SELECT max(n) AS n FROM (SELECT created_at, uniqExact(generation) AS n FROM ${ch.table(table)} WHERE org_id = {org:String} GROUP BY created_at)`,
          query_params: { org: ORG }, format: 'JSONEachRow',
        })).json<{ n: string }>())[0]?.n ?? 0));
      }
      return most;
    };
    // Nothing re-rolled since the last pass deleted the older rows (grace 0): touch an hour so a pass re-rolls and deletes.
    const m = messages.find((x) => x.status === 'delivered' && Date.parse(x.createdAt) < NOW - 48 * HOUR)!;
    await history.insert([{ ...m, updatedAt: iso(Date.now()) }]);
    const pass = await rollup.pass();
    // At least: an hour that settled meanwhile (the clock crossed an hour) is rolled too.
    expect(pass.hours).toBeGreaterThanOrEqual(1);
    expect(pass.days).toBeGreaterThanOrEqual(1);
    await eventuallyOne(generations);
    await expectSameForRandomQueries(20);
  }, 300_000);

  test('kept sources: touches the kept read saw are not news, a message arriving after it is (the staleness check counts from the read\'s time)', async () => {
    await rollup.pass();
    // Every touch more than 1 ms before the kept read counts as seen by it: the check skips the rolled hours' own touches.
    const reader = new MessageStats(ch, undefined, { rollup: true, staleMarginMs: 1 });
    // After the message whose delivery time the rollup cannot hold (that day reads FINAL alone).
    const qs = `_group=daily,country&createdAt_gte=${iso(FROM + 24 * HOUR)}`;
    const compiled = compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now: new Date(NOW) });
    const v = { orgId: ORG, projectId: null };
    const first = await reader.sms(v, compiled, 'EUR');
    const again = await reader.sms(v, compiled, 'EUR');
    expect(reader.reads).toMatchObject({ rollup: 2, stale: 0 });
    expect(again).toEqual(first);
    // A message created in a rolled hour days ago arrives now: its touch is newer than the kept read.
    await history.insert(lifeAt(FROM + 30 * HOUR + 777, 30_000));
    const after = await reader.sms(v, compiled, 'EUR');
    expect(reader.reads.stale).toBe(1);
    expectSameStats(after, await plain.sms(v, compiled, 'EUR'), { qs, project: null });
    expect(after).not.toEqual(first);
  }, 120_000);

  test('which filters the rollup answers (the others read FINAL alone)', () => {
    const orOf = (other: unknown): string => encodeURIComponent(JSON.stringify({ filter: [{ field: '', operator: 'or', value: [{ field: 'country', operator: 'eq', value: 'DE' }, other] }] }));
    const plan = (qs: string): boolean => rollupPlan(compileStats(parseUrl(new URLSearchParams(qs)), 'sms', { now: new Date(NOW) }).where) !== null;
    for (const qs of ['', 'country_eq=DE', 'status_in=delivered|failed', 'createdAt_gte=2 days ago', 'createdAt_range=2026-11-01T00:00:00Z|2026-11-02T00:00:00Z',
      'createdAt_lt=2026-11-02T10:30:00Z&country_nin=FR', 'country_eq=DE&country_eq=FR', `_q=${orOf({ field: 'status', operator: 'eq', value: 'failed' })}`,
      'country_containsi=d']) expect([qs, plan(qs)]).toEqual([qs, true]);
    for (const qs of ['to_eq=+4915112345678', 'clientId_eq=x', 'text_containsi=code', 'from_eq=Acme', 'createdAt_eq=2026-11-02T10:00:00Z',
      'deliveredAt_gte=1 day ago', 'statusCode_eq=0', `_q=${orOf({ field: 'to', operator: 'starts', value: '+49' })}`,
      'createdAt_gte=1 day ago&createdAt_gte=2 days ago', 'messagesCount_gt=1', 'charged_eq=true']) expect([qs, plan(qs)]).toEqual([qs, false]);
  });
});

/** Mutations apply in the background: wait until one generation per hour is left. */
async function eventuallyOne(generations: () => Promise<number>): Promise<void> {
  await eventually(generations, { what: 'one generation per hour', until: (n: number) => n === 1, timeoutMs: 30_000, intervalMs: 100 });
}
