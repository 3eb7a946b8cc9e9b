// Grammar A (spec 3 §2.1, §2.2, §4.1) against real ClickHouse: the embedded engine (chdb,
// in-process, its own temp dir), the product's migrations, rows written through
// MessageHistory.insert and read through the product's list path (compile + listRows via
// MessageHistory.list / groupCounts). Needs no other engine.
//  - known answers: a small fixed set of messages (3 organizations, 2 projects, statuses,
//    countries, mixed-case and unicode texts, NULL and empty clientIds, times around
//    midnight UTC and both 2026 DST changes of Europe/Berlin, prices), some with older state
//    rows (FINAL must show only the newest), and the exact ids each operator returns, through
//    the URL form and the JSON form;
//  - property: random URL-expressible queries, rendered with toUrlParams and toJson, return
//    the same rows from chdb;
//  - hostile values return the rows a literal comparison gives (usually none), never an error.
import fc from 'fast-check';
import { AppError } from '../../core/errors';
import {
  compile, OPERATORS_BY_TYPE, parseJson, parseUrl, SMS_FIELDS, toJson, toUrlParams,
  type Condition, type JsonQuery, type Node, type Operator, type Query, type SortKey,
} from '../../core/filters/grammar-a';
import type { SmsMessage } from '../../core/sms/message';
import type { ClickHouse } from '../../infra/clickhouse';
import { fromRow as fromMessageRow, MESSAGE_COLUMNS, MessageHistory, type Visibility } from '../../stores/message-history';
import { listRows, topLevelConjuncts } from '../../stores/scoped-query';
import { idAt, iso, makeMessage, seededRandom } from '../../support/message-rows';
import { HOSTILE_VALUES } from '../support/hostile-values';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const A: Visibility = { orgId: 'org-a', projectId: null };
const B: Visibility = { orgId: 'org-b', projectId: null };
const R: Visibility = { orgId: 'org-r', projectId: null };

// ---------------------------------------------------------------------------------------------
// Fixture. org-a: m01…m09 at fixed times. org-b: look-alikes of org-a rows (another tenant).
// org-r: 45 rows at times relative to the real clock (the list reads newest-first time slices
// relative to now), several sharing one instant.

const random = seededRandom(11);
const at = (text: string): number => Date.parse(text);

interface Fixture { current: SmsMessage; earlier: SmsMessage[]; stale: SmsMessage[] }
const FIXTURE = new Map<string, Fixture>();

function message(name: string, fields: Partial<SmsMessage> & { createdAt: string }, history: { earlier?: Partial<SmsMessage>[]; stale?: Partial<SmsMessage>[] } = {}): SmsMessage {
  const text = fields.text ?? 'Your code is 1234';
  const current = makeMessage({
    id: idAt(at(fields.createdAt), random), chargedAt: fields.createdAt, sentAt: null, deliveredAt: null,
    updatedAt: iso(at(fields.createdAt) + 60_000), text, deliveredText: text, charsCount: [...text].length, ...fields,
  });
  const version = (p: Partial<SmsMessage>): SmsMessage => ({ ...current, ...p });
  FIXTURE.set(name, { current, earlier: (history.earlier ?? []).map(version), stale: (history.stale ?? []).map(version) });
  return current;
}

const queued = (m: { createdAt: string }): Partial<SmsMessage> => ({ status: 'queued', statusCode: null, sentAt: null, deliveredAt: null, updatedAt: m.createdAt });

const m01 = { createdAt: '2026-03-28T23:30:00.000Z' }; // the evening before the spring DST change (01:00Z on 29 March)
message('m01', {
  ...m01, status: 'delivered', statusCode: 0, country: 'DE', to: '+4915111111111', normalizedTo: '+4915111111111', text: 'Your code is 1234',
  clientId: 'order-1', sentAt: '2026-03-28T23:30:05.000Z', deliveredAt: '2026-03-28T23:31:00.000Z', pricePerSmsMicros: 75_000, priceUserMicros: 75_000,
}, { earlier: [queued(m01)] });
message('m02', {
  createdAt: '2026-03-29T00:30:00.000Z', status: 'failed', statusCode: 5, country: 'FR', to: '+33612345678', normalizedTo: '+33612345678',
  text: 'Votre code: ÉTÉ 2026', clientId: null, sentAt: '2026-03-29T00:30:02.000Z', pricePerSmsMicros: 68_000, priceUserMicros: 68_000,
});
message('m03', {
  createdAt: '2026-03-29T01:30:00.000Z', status: 'delivered', statusCode: 0, country: 'DE', to: '+4915122222222', normalizedTo: '+4915122222222',
  text: 'ÜBER straße', clientId: 'Order-2', sentAt: '2026-03-29T01:30:01.000Z', deliveredAt: '2026-03-29T01:31:00.000Z', messagesCount: 2,
  encoding: 'UCS-2', unicode: true, allowUnicode: true, pricePerSmsMicros: 75_000, priceUserMicros: 150_000,
});
const m04 = { createdAt: '2026-10-24T23:59:59.999Z' }; // the last millisecond before midnight UTC
message('m04', {
  ...m04, status: 'sent', statusCode: null, country: 'GB', to: '+447700900123', normalizedTo: '+447700900123', text: 'Hello 👋 world',
  clientId: 'x', sentAt: '2026-10-25T00:00:01.000Z', encoding: 'UCS-2', unicode: true, allowUnicode: true, pricePerSmsMicros: 41_000, priceUserMicros: 41_000,
}, { earlier: [queued(m04)] });
message('m05', {
  createdAt: '2026-10-25T00:00:00.000Z', status: 'rejected', statusCode: 100, country: 'US', to: '+12025550123', normalizedTo: '+12025550123',
  text: `O'Brien said "hi" -- DROP TABLE`, clientId: '', charged: false, pricePerSmsMicros: 9_000, priceUserMicros: 9_000,
});
const m06 = { createdAt: '2026-10-25T01:00:00.000Z' }; // the autumn DST change: 03:00 CEST becomes 02:00 CET
message('m06', {
  ...m06, projectId: 'p2', status: 'delivered', statusCode: 0, country: 'DE', to: '+4915133333333', normalizedTo: '+4915133333333', text: 'code 9999',
  clientId: 'order-3', sentAt: '2026-10-25T01:00:05.000Z', deliveredAt: '2026-10-25T01:00:30.000Z', updatedAt: '2026-10-25T01:00:30.000Z',
  pricePerSmsMicros: 75_000, priceUserMicros: 75_000,
}, { stale: [{ status: 'sent', statusCode: null, deliveredAt: null, updatedAt: '2026-10-25T01:00:10.000Z' }] });
message('m07', {
  createdAt: '2026-11-22T10:00:00.123Z', status: 'expired', statusCode: 3, country: 'ES', to: '+34612345678', normalizedTo: '+34612345678',
  text: 'ΚΩΔΙΚΌΣ code', clientId: null, sentAt: '2026-11-22T10:00:01.000Z', encoding: 'UCS-2', unicode: true, allowUnicode: true,
  pricePerSmsMicros: 72_000, priceUserMicros: 72_000,
});
message('m08', {
  createdAt: '2026-11-21T10:00:00.000Z', status: 'buffered', statusCode: null, country: 'IT', to: '+393123456789', normalizedTo: '+393123456789',
  text: 'ciao%_\\', clientId: 'ORDER-1', sentAt: '2026-11-21T10:00:02.000Z', pricePerSmsMicros: 81_000, priceUserMicros: 81_000,
});
const m09 = { createdAt: '2026-06-15T12:00:00.000Z' };
message('m09', {
  ...m09, status: 'delivered', statusCode: 0, country: 'DE', to: '+4915144444444', normalizedTo: '+4915144444444', text: 'Order ready',
  clientId: 'order-9', scheduledAt: '2026-06-15T13:00:00.000Z', sentAt: '2026-06-15T13:00:01.000Z', deliveredAt: '2026-06-15T13:00:20.000Z',
  updatedAt: '2026-06-15T13:00:20.000Z', pricePerSmsMicros: 75_000, priceUserMicros: 75_000,
}, { earlier: [queued(m09), { status: 'sent', statusCode: null, deliveredAt: null, updatedAt: '2026-06-15T13:00:01.000Z' }] });

// org-b: the same kinds of rows, so any leak across tenants would show.
for (const [i, source] of ['m01', 'm02', 'm05', 'm06', 'm07', 'm08'].entries()) {
  const { current } = FIXTURE.get(source) as Fixture;
  const createdAt = iso(at(current.createdAt) + 1);
  message(`b${i + 1}`, { ...current, orgId: 'org-b', projectId: 'p1', createdAt, id: idAt(at(createdAt), random) });
}

// org-r: around the time slices (1, 7 and 30 days before now).
const REAL_NOW = Date.now();
const HOURS = [0.05, 1, 1, 1, 3, 12, 23.5, 24.5, 30, 48, 72, 100, 150, 160, 167.5, 168.5, 170, 200, 300, 400, 500, 600, 700, 719.5, 720.5, 800, 1000,
  1200, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 8000, 9000, 10_000, 12_000, 15_000, 20_000, 30_000, 40_000, 50_000, 60_000];
const SAME_INSTANT = REAL_NOW - 3_600_000;
HOURS.forEach((hours, i) => {
  const createdMs = hours === 1 ? SAME_INSTANT : Math.round(REAL_NOW - hours * 3_600_000);
  const createdAt = iso(createdMs);
  const fields = { createdAt, orgId: 'org-r', projectId: 'p1', country: ['NL', 'DE', 'FR'][i % 3] as string, text: `recent ${i}` };
  message(`r${String(i).padStart(2, '0')}`, { ...fields, status: (['delivered', 'failed', 'sent'] as const)[i % 3] as SmsMessage['status'] },
    i % 4 === 0 ? { earlier: [queued(fields)] } : {});
});

const ORG_A = ['m01', 'm02', 'm03', 'm04', 'm05', 'm06', 'm07', 'm08', 'm09'];
const NAME = new Map([...FIXTURE].map(([name, f]) => [f.current.id, name]));
const idOf = (name: string): string => (FIXTURE.get(name) as Fixture).current.id;
const allBut = (...names: string[]): string[] => ORG_A.filter((n) => !names.includes(n));
const sorted = (xs: readonly string[]): string[] => [...xs].sort();
/** Rows in the table: one per id and insert (optimize_on_insert keeps the newest of an id within one insert). */
const RAW_ROWS = [...FIXTURE.values()].reduce((s, f) => s + 1 + Math.min(1, f.earlier.length) + Math.min(1, f.stale.length), 0);

// ---------------------------------------------------------------------------------------------

let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
let history: MessageHistory;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('grammar_a');
  ch = engine.ch;
  history = new MessageHistory(ch);
  // No background merges: the older state rows stay in their parts, so every read must
  // pick the newest row per id itself (FINAL), as it must between two merges in production.
  await ch.client.command({ query: `SYSTEM STOP MERGES ${ch.table('sms_messages')}` });
  const all = [...FIXTURE.values()];
  // Separate inserts (separate parts), as the history writer flushes them: older states first,
  // the current state, then stale states that arrive late with an older updatedAt.
  await history.insert(all.flatMap((f) => f.earlier));
  await history.insert(all.map((f) => f.current));
  await history.insert(all.flatMap((f) => f.stale));
}, 60_000);

afterAll(() => engine?.close());

async function run(query: Query, v: Visibility): Promise<string[]> {
  const rows = await history.list(v, compile(query, SMS_FIELDS, { now: NOW }));
  return rows.map((m) => NAME.get(m.id) ?? `unknown:${m.id}`);
}
const viaUrl = (qs: string | URLSearchParams, v: Visibility = A): Promise<string[]> => run(parseUrl(new URLSearchParams(qs)), v);
const viaJson = (q: unknown, v: Visibility = A): Promise<string[]> => run(parseJson(typeof q === 'string' ? q : JSON.stringify(q)), v);

/** The URL form returns `expected` (in any order); the JSON form returns the same rows in the same order. */
async function check(qs: string, expected: readonly string[], json?: JsonQuery, v: Visibility = A): Promise<void> {
  const url = await viaUrl(qs, v);
  expect(sorted(url)).toEqual(sorted(expected));
  expect(await viaJson(json ?? toJson(parseUrl(new URLSearchParams(qs))), v)).toEqual(url);
}

type Case = readonly [string, readonly string[], JsonQuery?];
interface Row { readonly qs: string; readonly expected: readonly string[]; readonly json: JsonQuery | undefined }
const rows = (cases: readonly Case[]): Row[] => cases.map(([qs, expected, json]) => ({ qs, expected, json }));
const one = (field: string, operator: string, value: unknown): JsonQuery => ({ filter: [{ field, operator: operator as Operator, value }] });
const u = (key: string, value: string): string => new URLSearchParams([[key, value]]).toString();

describe('fixture', () => {
  test('every message is one current row after FINAL; the raw table also holds older states', async () => {
    const raw = await (await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('sms_messages')}`, format: 'JSONEachRow' })).json<{ n: string }>();
    expect(Number(raw[0]?.n)).toBe(RAW_ROWS);
    expect(sorted(await viaUrl(''))).toEqual(ORG_A);
    const read = await history.list(A, compile(parseUrl(new URLSearchParams('')), SMS_FIELDS));
    for (const m of read) expect(m).toEqual(FIXTURE.get(NAME.get(m.id) ?? '')?.current);
  });
});

describe('comparison: eq, ne on strings, ids, numbers, booleans and dates', () => {
  test.each(rows([
    ['status_eq=delivered', ['m01', 'm03', 'm06', 'm09']],
    ['status_ne=delivered', ['m02', 'm04', 'm05', 'm07', 'm08']],
    ['status_eq=queued', []], // only older state rows were queued
    ['status_eq=sent', ['m04']], // m06 has a stale `sent` row with an older updatedAt
    ['clientId_eq=order-1', ['m01']],
    ['clientId_ne=order-1', allBut('m01')], // NULL and '' clientIds are "not order-1"
    [u('to_eq', '+4915111111111'), ['m01']],
    [u('text_eq', `O'Brien said "hi" -- DROP TABLE`), ['m05']],
    ['text_eq=code', []],
    [`id_eq=${idOf('m05')}`, ['m05']],
    [`id_ne=${idOf('m05')}`, allBut('m05')],
    ['statusCode_eq=0', ['m01', 'm03', 'm06', 'm09'], one('statusCode', 'eq', 0)],
    ['statusCode_ne=0', ['m02', 'm04', 'm05', 'm07', 'm08'], one('statusCode', 'ne', 0)],
    ['statusCode_eq=100', ['m05'], one('statusCode', 'eq', 100)],
    ['priceUser_eq=0.075', ['m01', 'm06', 'm09'], one('priceUser', 'eq', 0.075)],
    ['priceUser_ne=0.075', allBut('m01', 'm06', 'm09'), one('priceUser', 'ne', 0.075)],
    ['pricePerSms_eq=0.075', ['m01', 'm03', 'm06', 'm09'], one('pricePerSms', 'eq', '0.075')],
    ['messagesCount_eq=2', ['m03'], one('messagesCount', 'eq', 2)],
    ['charged_eq=false', ['m05'], one('charged', 'eq', false)],
    ['charged_ne=true', ['m05'], one('charged', 'ne', true)],
    ['unicode_eq=true', ['m03', 'm04', 'm07'], one('unicode', 'eq', 'true')],
    [u('createdAt_eq', '2026-10-25T00:00:00Z'), ['m05']],
    [u('createdAt_eq', '2026-10-25T02:00:00+02:00'), ['m05']],
    [u('createdAt_ne', '2026-10-25T01:00:00+01:00'), allBut('m05')],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('comparison: eqi, nei (case-insensitive, UTF-8)', () => {
  test.each(rows([
    ['country_eqi=de', ['m01', 'm03', 'm06', 'm09']],
    ['country_nei=de', ['m02', 'm04', 'm05', 'm07', 'm08']],
    [u('text_eqi', 'über STRAßE'), ['m03']],
    [u('text_eqi', 'votre CODE: été 2026'), ['m02']],
    ['clientId_eqi=ORDER-1', ['m01', 'm08']],
    ['clientId_nei=ORDER-1', allBut('m01', 'm08')],
    ['status_nei=DELIVERED', ['m02', 'm04', 'm05', 'm07', 'm08']],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('ordering: lt, lte, gt, gte on dates (ISO with offsets, microsecond UTC, relative) and numbers', () => {
  test.each(rows([
    // The same instant written with +02:00 (Berlin summer time) and with Z.
    [u('createdAt_gte', '2026-03-29T02:30:00+02:00'), allBut('m01')],
    [u('createdAt_gte', '2026-03-29T00:30:00Z'), allBut('m01')],
    [u('createdAt_gte', '2026-03-29T00:30:00.000Z'), allBut('m01')],
    // Microsecond UTC without offset: one microsecond after m02 excludes it.
    [u('createdAt_gte', '2026-03-29T00:30:00.000001'), allBut('m01', 'm02')],
    [u('createdAt_gt', '2026-03-29 00:29:59.999999'), allBut('m01')],
    [u('createdAt_lt', '2026-03-29T03:30:00+02:00'), ['m01', 'm02']],
    [u('createdAt_lte', '2026-03-29T03:30:00+02:00'), ['m01', 'm02', 'm03']],
    // 02:00 local on 25 October happens twice in Berlin: +02:00 is 00:00Z, +01:00 is 01:00Z.
    [u('createdAt_gte', '2026-10-25T02:00:00+02:00'), ['m05', 'm06', 'm07', 'm08']],
    [u('createdAt_gte', '2026-10-25T02:00:00+01:00'), ['m06', 'm07', 'm08']],
    [u('createdAt_gte', '2026-10-25T01:00:00+0100'), ['m05', 'm06', 'm07', 'm08']],
    [u('createdAt_gte', '2026-10-25T01:00:00+01'), ['m05', 'm06', 'm07', 'm08']],
    // Midnight UTC: the last millisecond of 24 October is before it.
    [u('createdAt_lt', '2026-10-25T00:00:00Z'), ['m01', 'm02', 'm03', 'm04', 'm09']],
    [u('createdAt_gt', '2026-10-24T23:59:59.999Z'), ['m05', 'm06', 'm07', 'm08']],
    [u('createdAt_lte', '2026-10-24T23:59:59.999Z'), ['m01', 'm02', 'm03', 'm04', 'm09']],
    // Relative, counted back from the injected now (2026-11-22T12:00:00Z).
    ['createdAt_gte=1 day ago', ['m07']],
    ['createdAt_gte=2 days ago', ['m07', 'm08']],
    ['createdAt_gte=3 hours ago', ['m07']],
    ['createdAt_gte=119 minutes ago', []],
    ['createdAt_gt=7200 seconds ago', ['m07']], // 10:00:00.123 is after 10:00:00
    ['createdAt_gte=7199 seconds ago', []],
    ['createdAt_gte=7201 seconds ago', ['m07']],
    ['createdAt_lt=6 months ago', ['m01', 'm02', 'm03']],
    ['createdAt_gte=1 month ago', ['m04', 'm05', 'm06', 'm07', 'm08']],
    ['createdAt_gte=1 year ago', ORG_A],
    // Nullable dates: NULL never satisfies a comparison.
    [u('deliveredAt_lt', '2026-07-01T00:00:00Z'), ['m01', 'm03', 'm09']],
    [u('sentAt_gte', '2026-10-25T00:00:00Z'), ['m04', 'm06', 'm07', 'm08']],
    [u('scheduledAt_gt', '2026-01-01T00:00:00Z'), ['m09']],
    ['priceUser_lt=0.07', ['m02', 'm04', 'm05'], one('priceUser', 'lt', 0.07)],
    ['priceUser_lte=0.072', ['m02', 'm04', 'm05', 'm07'], one('priceUser', 'lte', 0.072)],
    ['priceUser_gt=0.075', ['m03', 'm08'], one('priceUser', 'gt', 0.075)],
    ['priceUser_gte=0.075', ['m01', 'm03', 'm06', 'm08', 'm09'], one('priceUser', 'gte', '0.075')],
    ['statusCode_gt=3', ['m02', 'm05'], one('statusCode', 'gt', 3)],
    ['statusCode_lt=5', ['m01', 'm03', 'm06', 'm07', 'm09'], one('statusCode', 'lt', 5)],
    ['messagesCount_gte=2', ['m03']],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));

  test('an unencoded + before the offset (decoded to a space) still means +02:00', async () => {
    expect(sorted(await viaUrl('createdAt_gte=2026-03-29T02:30:00+02:00'))).toEqual(allBut('m01'));
    expect(sorted(await viaUrl('createdAt_lt=2026-10-25T02:00:00+01:00'))).toEqual(['m01', 'm02', 'm03', 'm04', 'm05', 'm09']);
  });
});

describe('lists: in, nin, ini, nini', () => {
  test.each(rows([
    ['status_in=failed|rejected', ['m02', 'm05'], one('status', 'in', ['failed', 'rejected'])],
    ['status_nin=delivered|sent', ['m02', 'm05', 'm07', 'm08'], one('status', 'nin', ['delivered', 'sent'])],
    ['status_in=queued', []],
    ['country_in=DE|FR', ['m01', 'm02', 'm03', 'm06', 'm09']],
    ['country_ini=de|fR', ['m01', 'm02', 'm03', 'm06', 'm09']],
    ['country_nini=DE|fr|us', ['m04', 'm07', 'm08']],
    ['clientId_in=order-1|x', ['m01', 'm04']],
    ['clientId_nin=order-1|x', allBut('m01', 'm04')], // includes NULL and ''
    ['clientId_ini=order-1', ['m01', 'm08']],
    ['clientId_nini=ORDER-1|X', allBut('m01', 'm04', 'm08')],
    ['clientId_in=|order-9', ['m05', 'm09']], // '' is a value of its own
    [`id_in=${idOf('m01')}|${idOf('m05')}|${idOf('b1')}`, ['m01', 'm05']],
    [`id_nin=${idOf('m01')}|${idOf('m05')}`, allBut('m01', 'm05')],
    ['statusCode_in=0|5', ['m01', 'm02', 'm03', 'm06', 'm09'], one('statusCode', 'in', [0, 5])],
    ['statusCode_nin=0|5', ['m04', 'm05', 'm07', 'm08'], one('statusCode', 'nin', [0, '5'])],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('strings: contains, containsi, ncontains, ncontainsi, starts, startsi, ends, endsi (one value or a list)', () => {
  test.each(rows([
    ['text_contains=code', ['m01', 'm02', 'm06', 'm07']],
    ['text_contains=Code', []],
    ['text_containsi=CODE', ['m01', 'm02', 'm06', 'm07']],
    [u('text_containsi', 'été'), ['m02']],
    [u('text_containsi', 'κωδικό'), ['m07']],
    [u('text_containsi', 'STRAßE'), ['m03']],
    ['text_ncontains=code', ['m03', 'm04', 'm05', 'm08', 'm09']],
    ['text_ncontainsi=CODE', ['m03', 'm04', 'm05', 'm08', 'm09']],
    ['text_contains=code|Order', ['m01', 'm02', 'm06', 'm07', 'm09'], one('text', 'contains', ['code', 'Order'])],
    [u('text_containsi', 'ORDER|été'), ['m02', 'm09'], one('text', 'containsi', ['ORDER', 'été'])],
    ['text_ncontains=code|Order', ['m03', 'm04', 'm05', 'm08'], one('text', 'ncontains', ['code', 'Order'])],
    ['text_ncontainsi=CODE|order', ['m03', 'm04', 'm05', 'm08'], one('text', 'ncontainsi', ['CODE', 'order'])],
    ['text_contains=nothing', [], one('text', 'contains', ['nothing'])],
    ['text_starts=Your', ['m01']],
    ['text_startsi=YOUR', ['m01']],
    [u('text_startsi', 'über'), ['m03']],
    [u('text_starts', 'über'), []],
    [u('to_starts', '+49'), ['m01', 'm03', 'm06', 'm09']],
    [u('to_starts', '+49|+33'), ['m01', 'm02', 'm03', 'm06', 'm09'], one('to', 'starts', ['+49', '+33'])],
    ['text_ends=1234', ['m01']],
    [u('text_endsi', 'STRAßE'), ['m03']],
    ['text_endsi=WORLD', ['m04']],
    ['text_ends=world|1234', ['m01', 'm04']],
    ['text_endsi=ready|999', ['m06', 'm09']],
    [u('text_ends', '\\'), ['m08']],
    // No wildcards: %, _ and quotes are plain characters.
    [u('text_contains', '%_'), ['m08']],
    [u('text_contains', "'"), ['m05']],
    [u('text_contains', '"hi" -- DROP'), ['m05']],
    [u('text_contains', '👋'), ['m04']],
    // Nullable strings: NULL never contains, and is among what does not contain.
    ['clientId_contains=order', ['m01', 'm06', 'm09']],
    ['clientId_containsi=order', ['m01', 'm03', 'm06', 'm08', 'm09']],
    ['clientId_ncontains=order', ['m02', 'm03', 'm04', 'm05', 'm07', 'm08']],
    ['clientId_ncontainsi=ORDER', ['m02', 'm04', 'm05', 'm07']],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('ranges: range [min, max), between (min, max), betweeneq [min, max] on numbers and dates', () => {
  test.each(rows([
    ['priceUser_range=0.068|0.081', ['m01', 'm02', 'm06', 'm07', 'm09'], one('priceUser', 'range', [0.068, 0.081])],
    ['priceUser_between=0.068|0.081', ['m01', 'm06', 'm07', 'm09'], one('priceUser', 'between', [0.068, 0.081])],
    ['priceUser_betweeneq=0.068|0.081', ['m01', 'm02', 'm06', 'm07', 'm08', 'm09'], one('priceUser', 'betweeneq', [0.068, '0.081'])],
    ['statusCode_range=0|5', ['m01', 'm03', 'm06', 'm07', 'm09'], one('statusCode', 'range', [0, 5])],
    ['statusCode_between=0|5', ['m07'], one('statusCode', 'between', [0, 5])],
    ['statusCode_betweeneq=0|5', ['m01', 'm02', 'm03', 'm06', 'm07', 'm09'], one('statusCode', 'betweeneq', [0, 5])],
    ['priceUser_range=0.081|0.068', []],
    [u('createdAt_range', '2026-03-29T00:30:00Z|2026-03-29T01:30:00Z'), ['m02']],
    [u('createdAt_between', '2026-03-29T00:30:00Z|2026-03-29T01:30:00Z'), []],
    [u('createdAt_betweeneq', '2026-03-29T00:30:00Z|2026-03-29T01:30:00Z'), ['m02', 'm03']],
    [u('createdAt_range', '2026-10-25T01:00:00+01:00|2026-10-25T02:00:00+01:00'), ['m05']],
    [u('createdAt_betweeneq', '2026-10-25T01:00:00+01:00|2026-10-25T02:00:00+01:00'), ['m05', 'm06']],
    [u('createdAt_range', '2 days ago|1 day ago'), ['m08']],
    [u('deliveredAt_betweeneq', '2026-01-01T00:00:00Z|2026-12-31T23:59:59.999999'), ['m01', 'm03', 'm06', 'm09']],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('exists on nullable fields (and the empty string)', () => {
  test.each(rows([
    ['clientId_exists=true', ['m01', 'm03', 'm04', 'm06', 'm08', 'm09'], one('clientId', 'exists', true)],
    ['clientId_exists=false', ['m02', 'm05', 'm07'], one('clientId', 'exists', false)],
    ['statusCode_exists=true', ['m01', 'm02', 'm03', 'm05', 'm06', 'm07', 'm09'], one('statusCode', 'exists', 'true')],
    ['statusCode_exists=false', ['m04', 'm08']],
    ['deliveredAt_exists=true', ['m01', 'm03', 'm06', 'm09']],
    ['deliveredAt_exists=false', ['m02', 'm04', 'm05', 'm07', 'm08']],
    ['sentAt_exists=false', ['m05']], // m04's older queued row had no sentAt
    ['scheduledAt_exists=true', ['m09']],
    ['createdAt_exists=true', ORG_A],
    ['createdAt_exists=false', []],
    ['id_exists=true', ORG_A],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('FINAL: filters see only the newest state of each message', () => {
  test.each(rows([
    ['status_eq=sent&country_eq=DE', []], // m06's stale sent row must not come back
    ['status_in=queued|sent&country_in=DE|GB', ['m04']],
    ['sentAt_exists=false&country_eq=GB', []],
    ['deliveredAt_exists=false&clientId_eq=order-3', []],
  ]))('$qs', ({ qs, expected, json }) => check(qs, expected, json));
});

describe('and / or', () => {
  test('repeated URL keys are an OR for that key, different keys an AND', async () => {
    await check('status_eq=failed&status_eq=rejected', ['m02', 'm05']);
    await check('text_contains=code&text_contains=ready', ['m01', 'm02', 'm06', 'm07', 'm09']);
    await check('status_eq=delivered&status_eq=failed&country_eq=DE', ['m01', 'm03', 'm06', 'm09']);
    await check('clientId_exists=false&clientId_exists=true&country_eq=US', ['m05']);
  });

  test('nested and/or in JSON', async () => {
    const cond = (field: string, operator: string, value: unknown): JsonQuery['filter'][number] => ({ field, operator: operator as Operator, value });
    const group = (operator: 'and' | 'or', ...value: JsonQuery['filter'][number][]): JsonQuery['filter'][number] => ({ field: '', operator, value });
    const cases: [JsonQuery, string[]][] = [
      [{ filter: [group('or', cond('country', 'eq', 'FR'), group('and', cond('status', 'eq', 'delivered'), cond('priceUser', 'gt', 0.1)))] }, ['m02', 'm03']],
      [{ filter: [group('or', cond('status', 'eq', 'failed'), cond('status', 'eq', 'expired')), group('or', cond('country', 'eq', 'ES'), cond('country', 'eq', 'US'))] }, ['m07']],
      // An OR across a stable and a changing column.
      [{ filter: [group('or', cond('country', 'eq', 'US'), cond('status', 'eq', 'expired'))] }, ['m05', 'm07']],
      [{ filter: [group('or', cond('country', 'eq', 'DE'), cond('status', 'eq', 'sent')), cond('clientId', 'exists', true)] }, ['m01', 'm03', 'm04', 'm06', 'm09']],
      [{ filter: [group('and', group('or', group('and', cond('text', 'containsi', 'CODE'), cond('country', 'ne', 'FR')), cond('statusCode', 'eq', 100)))] }, ['m01', 'm05', 'm06', 'm07']],
      [{ filter: [group('or')] }, []],
      [{ filter: [group('and')] }, ORG_A],
      [{ filter: [group('or', group('and'), cond('status', 'eq', 'nothing'))] }, ORG_A],
      [{ filter: [] }, ORG_A],
    ];
    for (const [json, expected] of cases) expect(sorted(await viaJson(json))).toEqual(sorted(expected));
  });
});

describe('_sort, _start/_limit', () => {
  const DEFAULT = ['m07', 'm08', 'm06', 'm05', 'm04', 'm09', 'm03', 'm02', 'm01'];
  test.each<readonly [string, readonly string[]]>([
    ['', DEFAULT],
    ['_sort=createdAt:-', DEFAULT],
    ['_sort=createdAt', [...DEFAULT].reverse()],
    ['_sort=createdAt:%2B', [...DEFAULT].reverse()],
    ['_sort=priceUser:-,createdAt', ['m03', 'm08', 'm01', 'm09', 'm06', 'm07', 'm02', 'm04', 'm05']],
    ['_sort=country,createdAt:-', ['m06', 'm09', 'm03', 'm01', 'm07', 'm02', 'm04', 'm08', 'm05']],
    ['_sort=country:+,createdAt:-', ['m06', 'm09', 'm03', 'm01', 'm07', 'm02', 'm04', 'm08', 'm05']], // unencoded +
    ['_sort=statusCode:-', ['m05', 'm02', 'm07', 'm06', 'm09', 'm03', 'm01', 'm08', 'm04']], // ties by id DESC (ids are time-ordered), NULLs last
    ['_sort=statusCode', ['m06', 'm09', 'm03', 'm01', 'm07', 'm02', 'm05', 'm08', 'm04']],
    ['_sort=id', sorted(ORG_A.map(idOf)).map((id) => NAME.get(id) ?? id)],
    ['_start=2&_limit=3', ['m06', 'm05', 'm04']],
    ['_start=0&_limit=1', ['m07']],
    ['_start=8&_limit=5', ['m01']],
    ['_start=9&_limit=5', []],
    ['_start=1&_limit=1000', DEFAULT.slice(1)],
    ['_start=5000&_limit=10', []],
    ['status_eq=delivered&_sort=priceUser:-,createdAt:-&_start=1&_limit=2', ['m06', 'm09']],
  ])('%s', async (qs, expected) => {
    const url = await viaUrl(qs);
    expect(url).toEqual(expected);
    expect(await viaJson(toJson(parseUrl(new URLSearchParams(qs))))).toEqual(url);
  });

  test('the same ordering in JSON: sort pairs and paging', async () => {
    expect(await viaJson({ sort: [['country', 'asc'], ['createdAt', 'desc']], paging: { start: 1, limit: 3 } })).toEqual(['m09', 'm03', 'm01']);
  });

  // org-r's rows lie on both sides of the newest-first time slices (1, 7, 30 days before now).
  const recent = [...FIXTURE].filter(([, f]) => f.current.orgId === 'org-r').map(([name, f]) => ({ name, m: f.current }));
  const newestFirst = (xs: typeof recent): string[] =>
    [...xs].sort((a, b) => b.m.createdAt.localeCompare(a.m.createdAt) || (a.m.id < b.m.id ? 1 : a.m.id > b.m.id ? -1 : 0)).map((x) => x.name);
  const PAGES: readonly (readonly [number, number])[] = [[0, 5], [3, 4], [5, 10], [0, 45], [0, 50], [10, 50], [20, 7], [40, 10], [44, 1], [45, 5], [1, 999], [2, 1000]];

  test.each(PAGES)('newest first across time slices: _start=%i&_limit=%i', async (start, limit) => {
    const all = newestFirst(recent);
    expect(await viaUrl(`_start=${start}&_limit=${limit}`, R)).toEqual(all.slice(start, start + limit));
    const filtered = newestFirst(recent.filter((x) => x.m.status !== 'sent' && x.m.country !== 'FR'));
    expect(await viaUrl(`status_in=delivered|failed&country_ne=FR&_start=${start}&_limit=${limit}`, R)).toEqual(filtered.slice(start, start + limit));
    const oldestFirst = [...recent].sort((a, b) => a.m.createdAt.localeCompare(b.m.createdAt) || (a.m.id < b.m.id ? 1 : -1)).map((x) => x.name);
    expect(await viaUrl(`_sort=createdAt&_start=${start}&_limit=${limit}`, R)).toEqual(oldestFirst.slice(start, start + limit)); // ties: id DESC
  });

  test('rows sharing one instant are ordered by id DESC across page boundaries', async () => {
    const tied = newestFirst(recent.filter((x) => Date.parse(x.m.createdAt) === SAME_INSTANT));
    expect(tied).toHaveLength(3);
    const pages = [];
    for (let start = 0; start < 3; start++) pages.push(...(await viaUrl(`createdAt_eq=${iso(SAME_INSTANT)}&_start=${start}&_limit=1`, R)));
    expect(pages).toEqual(tied);
  });
});

describe('list plan without FINAL: the same rows as the FINAL query', () => {
  // The truth: the plain query as first shipped, newest version per id by FINAL.
  async function viaFinal(c: ReturnType<typeof compile>, v: Visibility): Promise<string[]> {
    const result = await ch.client.query({
      query: `SELECT id FROM ${ch.table('sms_messages')} FINAL WHERE org_id = {__org:String}
              AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)}) AND (${c.where})
              ORDER BY ${c.orderBy} LIMIT {__limit:UInt32} OFFSET {__offset:UInt32}`,
      query_params: { ...c.params, __org: v.orgId, __project: v.projectId, __limit: c.limit, __offset: c.offset },
      format: 'JSONEachRow',
    });
    return (await result.json<{ id: string }>()).map((r) => NAME.get(r.id) ?? `unknown:${r.id}`);
  }
  const keysThenFetch = async (c: ReturnType<typeof compile>, v: Visibility): Promise<string[]> =>
    (await listRows<{ id: string }>(ch, 'sms_messages', MESSAGE_COLUMNS, v, c, { fullRowsMax: 0 })).map((r) => NAME.get(r.id) ?? `unknown:${r.id}`);

  test.each<readonly [string, Visibility]>([
    // Older versions match where the newest does not: candidates fall short and are asked again.
    ['status_in=queued|delivered&_start=0&_limit=1', R],
    ['status_in=queued|delivered&_start=2&_limit=2', R],
    ['status_eq=queued&_start=0&_limit=1', R],
    ['status_in=queued|sent&_sort=status,createdAt', A],
    ['status_in=sent|delivered&_sort=status:-&_start=1&_limit=2', A],
    ['deliveredAt_exists=false&_start=0&_limit=3', A],
    ['_sort=sentAt:-', A],
    ['_start=44&_limit=5', R],
    ['_start=45&_limit=5', R], // just past the end: an empty page
    ['_start=100000&_limit=1000', R], // far beyond the end: an empty page
  ])('%s', async (qs, v) => {
    const c = compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS, { now: NOW });
    const truth = await viaFinal(c, v);
    expect((await history.list(v, c)).map((m) => NAME.get(m.id))).toEqual(truth);
    expect(await keysThenFetch(c, v)).toEqual(truth);
  });

  test('a deep page read as keys returns the newest version of each row', async () => {
    const c = compile(parseUrl(new URLSearchParams('_start=0&_limit=20')), SMS_FIELDS, { now: NOW });
    const rows = await listRows<Parameters<typeof fromMessageRow>[0]>(ch, 'sms_messages', MESSAGE_COLUMNS, A, c, { fullRowsMax: 0 });
    for (const r of rows.map(fromMessageRow)) expect(r).toEqual(FIXTURE.get(NAME.get(r.id) ?? '')?.current);
  });

  test('property: random queries and pages equal the FINAL query, on both paths', async () => {
    await fc.assert(
      fc.asyncProperty(queryArb, fc.constantFrom(A, R, B, { orgId: 'org-a', projectId: 'p2' }), fc.nat(12), fc.integer({ min: 1, max: 6 }), async (q, v, start, limit) => {
        const paged: Query = { ...q, paging: { start, limit } };
        let c: ReturnType<typeof compile>;
        try { c = compile(paged, SMS_FIELDS, { now: NOW }); } catch (err) { if (err instanceof AppError) return; throw err; }
        const truth = await viaFinal(c, v);
        expect((await history.list(v, c)).map((m) => NAME.get(m.id))).toEqual(truth);
        expect(await keysThenFetch(c, v)).toEqual(truth);
      }),
      { numRuns: 60, seed: 20261123 },
    );
  }, 240_000);
});

describe('_group: hourly, daily, monthly and by field', () => {
  const groups = async (qs: string, v: Visibility = A): Promise<unknown> => {
    const counts = await history.groupCounts(v, compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS, { now: NOW }));
    const json = await history.groupCounts(v, compile(parseJson(JSON.stringify(toJson(parseUrl(new URLSearchParams(qs))))), SMS_FIELDS, { now: NOW }));
    expect(json).toEqual(counts);
    return counts.map((g) => [g.group, g.count]);
  };

  test('daily, in UTC', async () => {
    expect(await groups('_group=daily')).toEqual([
      ['2026-03-28T00:00:00.000Z', 1], ['2026-03-29T00:00:00.000Z', 2], ['2026-06-15T00:00:00.000Z', 1], ['2026-10-24T00:00:00.000Z', 1],
      ['2026-10-25T00:00:00.000Z', 2], ['2026-11-21T00:00:00.000Z', 1], ['2026-11-22T00:00:00.000Z', 1],
    ]);
  });

  test('hourly', async () => {
    expect(await groups('_group=hourly&createdAt_lt=2026-10-26T00:00:00Z&createdAt_gte=2026-03-01T00:00:00Z')).toEqual([
      ['2026-03-28T23:00:00.000Z', 1], ['2026-03-29T00:00:00.000Z', 1], ['2026-03-29T01:00:00.000Z', 1], ['2026-06-15T12:00:00.000Z', 1],
      ['2026-10-24T23:00:00.000Z', 1], ['2026-10-25T00:00:00.000Z', 1], ['2026-10-25T01:00:00.000Z', 1],
    ]);
  });

  test('monthly', async () => {
    expect(await groups('_group=monthly')).toEqual([
      ['2026-03-01T00:00:00.000Z', 3], ['2026-06-01T00:00:00.000Z', 1], ['2026-10-01T00:00:00.000Z', 3], ['2026-11-01T00:00:00.000Z', 2],
    ]);
  });

  test('by field: the newest state only, in the field order, NULL last', async () => {
    expect(await groups('_group=status')).toEqual([['buffered', 1], ['delivered', 4], ['expired', 1], ['failed', 1], ['rejected', 1], ['sent', 1]]);
    expect(await groups('_group=statusCode')).toEqual([['0', 4], ['3', 1], ['5', 1], ['100', 1], [null, 2]]);
    expect(await groups('_group=priceUser&priceUser_gte=0.07')).toEqual([['0.072', 1], ['0.075', 3], ['0.081', 1], ['0.15', 1]]);
    expect(await groups('_group=country&status_eq=delivered')).toEqual([['DE', 4]]);
    expect(await groups('_group=status&_start=1&_limit=2')).toEqual([['delivered', 4], ['expired', 1]]);
    expect(await groups('_group=country', { orgId: 'org-a', projectId: 'p2' })).toEqual([['DE', 1]]);
  });
});

describe('tenant scope', () => {
  const QUERIES = ['', 'status_ne=nothing', 'text_containsi=CODE', 'clientId_exists=false', 'createdAt_gte=10 years ago', '_sort=priceUser&_start=0&_limit=1000'];

  test.each(QUERIES)("another organization's rows never appear: %j", async (qs) => {
    const a = await viaUrl(qs, A);
    const b = await viaUrl(qs, B);
    expect(a.every((n) => n.startsWith('m'))).toBe(true);
    expect(b.every((n) => n.startsWith('b'))).toBe(true);
    expect(b.length).toBeGreaterThan(0);
    expect(await viaUrl(qs, { orgId: 'org-none', projectId: null })).toEqual([]);
  });

  test('a project-scoped token sees its project only', async () => {
    expect(await viaUrl('', { orgId: 'org-a', projectId: 'p2' })).toEqual(['m06']);
    expect(await viaUrl('status_eq=delivered', { orgId: 'org-a', projectId: 'p1' })).toEqual(['m09', 'm03', 'm01']);
    expect(await viaUrl('', { orgId: 'org-b', projectId: 'p2' })).toEqual([]);
  });
});

describe('list plan: the compiled WHERE splits at its top-level ANDs only', () => {
  const where = (qs: string): string => compile(parseUrl(new URLSearchParams(qs)), SMS_FIELDS, { now: NOW }).where;
  const balanced = (part: string): boolean => part.replace(/\{[^}]*\}/g, '').split('').reduce((d, c) => (d < 0 ? d : d + (c === '(' ? 1 : c === ')' ? -1 : 0)), 0) === 0;
  test.each<readonly [string, number]>([
    ['', 0],
    ['status_eq=a&country_eq=b', 2],
    ['status_eq=a&status_eq=b&country_eq=c', 2], // the OR stays one condition
    [`${u('createdAt_gte', '2026-10-25T02:00:00+01:00')}&clientId_ne=x&text_containsi=a|b`, 3], // placeholders hold parentheses and quotes
    ['clientId_exists=false&text_contains=a|b&statusCode_betweeneq=1|2&unicode_eq=true', 4],
  ])('%j', (qs, count) => {
    const parts = topLevelConjuncts(where(qs));
    expect(parts).toHaveLength(count);
    if (count > 0) expect(parts.join(' AND ')).toBe(where(qs));
    for (const part of parts) expect(balanced(part)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Property: the URL form and the JSON form of one query return the same rows from chdb.

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
const FIXTURE_STRINGS = [...new Set([...FIXTURE.values()].flatMap((f) => [f.current.status, f.current.country, f.current.text, f.current.to, f.current.clientId ?? '']))];
const stringValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...FIXTURE_STRINGS, 'code', 'CODE', 'Order', 'order', 'ORDER-1', 'de', 'é', 'ÉTÉ', 'straße', '+49', '1234', "'", '\\', '👋', '%', ''),
  fc.constantFrom(...FIXTURE_STRINGS).chain((s) => fc.tuple(fc.nat(s.length), fc.nat(s.length)).map(([i, j]) => s.slice(Math.min(i, j), Math.max(i, j)))),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
).filter((s) => !s.includes('|'));
const numberValue: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, 1, 2, 3, 5, 100, 0.009, 0.041, 0.068, 0.072, 0.075, 0.081, 0.15, 11, 17),
  fc.integer({ min: -5, max: 200 }),
  fc.double({ min: -1, max: 1, noNaN: true }).map((n) => (n === 0 ? 0 : n)),
);
const FIXTURE_TIMES = [...FIXTURE.values()].map((f) => at(f.current.createdAt));
const dateValue: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(fc.constantFrom(...FIXTURE_TIMES), fc.integer({ min: -2, max: 2 }), fc.integer({ min: -12, max: 14 })).map(([t, delta, offsetHours]) => {
    const local = new Date(t + delta + offsetHours * 3_600_000).toISOString().slice(0, 23);
    return offsetHours === 0 ? `${local}Z` : `${local}${offsetHours < 0 ? '-' : '+'}${pad(Math.abs(offsetHours))}:00`;
  }),
  fc.tuple(fc.constantFrom(...FIXTURE_TIMES), fc.integer({ min: 0, max: 999 })).map(([t, micros]) => `${new Date(t).toISOString().slice(0, 23)}${pad(micros, 3)}`),
  fc.tuple(fc.integer({ min: 0, max: 400 }), fc.constantFrom('second', 'minute', 'hour', 'day', 'month', 'year')).map(([n, unit]) => `${n} ${unit}s ago`),
);
const ID_VALUES = [...FIXTURE.values()].map((f) => f.current.id);

function scalarFor(type: string, field: string): fc.Arbitrary<unknown> {
  if (type === 'number') return numberValue;
  if (type === 'date') return dateValue;
  if (type === 'boolean') return fc.boolean();
  if (type === 'id' || field === 'id') return fc.oneof(fc.constantFrom(...ID_VALUES), stringValue);
  return stringValue;
}

function valueFor(type: string, field: string, op: Operator): fc.Arbitrary<unknown> {
  if (op === 'exists') return fc.boolean();
  if (['in', 'nin', 'ini', 'nini'].includes(op)) return fc.array(scalarFor(type, field), { minLength: 1, maxLength: 3 });
  if (['range', 'between', 'betweeneq'].includes(op)) return fc.tuple(scalarFor(type, field), scalarFor(type, field));
  if (op.includes('contains') || op.startsWith('starts') || op.startsWith('ends')) {
    return fc.oneof(stringValue, fc.array(stringValue, { minLength: 1, maxLength: 3 }));
  }
  return scalarFor(type, field);
}

const fieldOp = fc.constantFrom(...SMS_FIELDS).chain((def) => fc.constantFrom(...OPERATORS_BY_TYPE[def.type]).map((op) => [def, op] as const));
const conditionArb: fc.Arbitrary<Node> = fieldOp.chain(([def, op]) =>
  fc.array(valueFor(def.type, def.name, op), { minLength: 1, maxLength: 2 }).map((values): Node => {
    const conds = values.map((value): Condition => ({ kind: 'cond', field: def.name, operator: op, value }));
    return conds.length === 1 ? (conds[0] as Condition) : { kind: 'or', children: conds };
  }),
);
const keyOf = (node: Node): string => {
  const first = node.kind === 'cond' ? node : node.children[0];
  return first?.kind === 'cond' ? `${first.field}_${first.operator}` : '';
};
const queryArb: fc.Arbitrary<Query> = fc.record({
  children: fc.uniqueArray(conditionArb, { maxLength: 3, selector: keyOf }),
  sort: fc.uniqueArray(fc.record({ field: fc.constantFrom(...SMS_FIELDS.map((f) => f.name)), direction: fc.constantFrom('asc' as const, 'desc' as const) }), { maxLength: 2, selector: (k: SortKey) => k.field }),
  paging: fc.option(fc.record({ start: fc.integer({ min: 0, max: 12 }), limit: fc.integer({ min: 1, max: 20 }) }), { nil: undefined }),
}).map(({ children, sort, paging }) => ({ filter: { kind: 'and' as const, children }, sort, ...(paging === undefined ? {} : { paging }) }));

/** The rows, or the code of a client error (a value the catalogue refuses is refused by both forms). */
async function outcome(fn: () => Promise<string[]>): Promise<string[] | string> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) return `error ${err.code}`;
    throw err;
  }
}

describe('property: URL form and JSON form return the same rows from chdb', () => {
  test('random URL-expressible queries over SMS_FIELDS', async () => {
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(queryArb, fc.constantFrom(A, R, { orgId: 'org-a', projectId: 'p2' }), async (q, v) => {
        const url = await outcome(() => viaUrl(toUrlParams(q), v));
        const json = await outcome(() => viaJson(toJson(q), v));
        expect(json).toEqual(url);
        if (Array.isArray(url)) {
          expect(url.every((n) => !n.startsWith('unknown'))).toBe(true);
          if (url.length > 0) nonEmpty += 1;
        }
      }),
      { numRuns: 60, seed: 20261122 },
    );
    expect(nonEmpty).toBeGreaterThan(10);
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
// Hostile values: bound as parameters, compared literally, never an error.


// The literal meaning of each operator over the fixture, for these ASCII-or-plain values.
type Model = (column: string | null, value: string) => boolean;
const MODELS: readonly (readonly [string, keyof SmsMessage, Operator, Model])[] = [
  ['text', 'text', 'eq', (c, v) => c === v],
  ['text', 'text', 'contains', (c, v) => c !== null && c.includes(v)],
  ['text', 'text', 'ncontains', (c, v) => c === null || !c.includes(v)],
  ['text', 'text', 'starts', (c, v) => c !== null && c.startsWith(v)],
  ['text', 'text', 'ends', (c, v) => c !== null && c.endsWith(v)],
  ['clientId', 'clientId', 'ne', (c, v) => c === null || c !== v],
  ['clientId', 'clientId', 'in', (c, v) => c === v],
  ['status', 'status', 'nin', (c, v) => c !== v],
  ['to', 'to', 'starts', (c, v) => c !== null && c.startsWith(v)],
  ['id', 'id', 'eq', (c, v) => c === v],
];

describe('hostile values', () => {
  const table = MODELS.flatMap(([field, key, op, model]) => HOSTILE_VALUES.map((h, i) => [`${field}_${op} #${i}`, field, key, op, model, h] as const));

  test.each(table)('%s: URL and JSON forms give the literal answer', async (_name, field, key, op, model, hostile) => {
    const expected = ORG_A.filter((n) => model((FIXTURE.get(n) as Fixture).current[key] as string | null, hostile));
    const list = ['in', 'nin'].includes(op);
    const url = await viaUrl(new URLSearchParams([[`${field}_${op}`, hostile]]));
    const json = await viaJson(one(field, op, list ? [hostile] : hostile));
    if (!(list && hostile.includes('|'))) expect(sorted(url)).toEqual(sorted(expected));
    expect(sorted(json)).toEqual(sorted(expected));
  });

  test('values with quotes, comments and backslashes match the rows that hold them literally', async () => {
    expect(await viaUrl(u('text_contains', "O'Brien"))).toEqual(['m05']);
    expect(await viaUrl(u('text_contains', '-- DROP'))).toEqual(['m05']);
    expect(await viaUrl(u('text_ends', '\\'))).toEqual(['m08']);
    expect(await viaJson(one('text', 'containsi', ["o'brien", 'CIAO%_\\']))).toEqual(['m08', 'm05']);
  });

  test('hostile names are refused before any SQL exists', () => {
    const refused = (fn: () => unknown): string => {
      try {
        fn();
      } catch (err) {
        if (err instanceof AppError) return err.code;
        throw err;
      }
      return 'accepted';
    };
    expect(refused(() => compile(parseUrl(new URLSearchParams('status) OR (1=1_eq=x')), SMS_FIELDS))).toBe('INVALID_FILTER');
    expect(refused(() => compile(parseUrl(new URLSearchParams('_sort=status DESC; DROP TABLE x')), SMS_FIELDS))).toBe('INVALID_FILTER');
    expect(refused(() => compile(parseUrl(new URLSearchParams('_group=toStartOfWeek')), SMS_FIELDS))).toBe('INVALID_FILTER');
    expect(refused(() => compile(parseJson({ filter: [{ field: 'created_at', operator: 'eq', value: 'x' }] }), SMS_FIELDS))).toBe('INVALID_FILTER');
  });

  test('the table is intact afterwards', async () => {
    const raw = await (await ch.client.query({ query: `SELECT count() AS n FROM ${ch.table('sms_messages')}`, format: 'JSONEachRow' })).json<{ n: string }>();
    expect(Number(raw[0]?.n)).toBe(RAW_ROWS);
    expect(sorted(await viaUrl(''))).toEqual(ORG_A);
  });
});
