// Spec 3 §4.1 rule 5 (`_group` for statistics endpoints): the stats compiler behind
// GET /sms/stats and GET /lookup/stats (core/filters/grammar-a/stats.ts, docs/grammar-a.md
// "Statistics"): the keys `_group` asks for, the SQL shape, client values only as bound
// parameters, and 400 INVALID_FILTER for every bad `_group`, `_sort` or filter.
import { errorOf } from '../support/app-error';
import { parseJson, parseUrl } from '../../core/filters/grammar-a';
import { compileStats, STATS_DEFAULT_LIMIT, STATS_MAX_LIMIT, type StatsSubject } from '../../core/filters/grammar-a/stats';
import { statsStatement, withLiveFine } from '../../stores/message-stats';
import { FINE_BUCKETS } from '../../stores/delivery-histogram';
import type { ClickHouse } from '../../infra/clickhouse';
import { openApiDocument } from '../../gateways/http/openapi';

const now = new Date('2026-11-22T12:00:00.000Z');
const stats = (qs: string, subject: StatsSubject = 'sms') => compileStats(parseUrl(new URLSearchParams(qs), { ignore: ['access_token'] }), subject, { now });
const fakeCh = { table: (name: string) => `db.${name}` } as unknown as ClickHouse;

function expectError(qs: string, fragments: readonly string[], subject: StatsSubject = 'sms'): void {
  const err = errorOf(() => stats(qs, subject));
  expect(err.code).toBe('INVALID_FILTER');
  expect(err.status).toBe(400);
  for (const f of fragments) expect(err.message).toContain(f);
}

describe('stats count outbound messages unless the filter names direction (migration 0014)', () => {
  test('no direction in the filter: outbound only, as a bound parameter', () => {
    const c = stats('country_eq=DE');
    expect(c.where).toContain('direction');
    expect(Object.values(c.params)).toContain('outbound');
  });

  test('a filter on direction is taken as written, with no second condition', () => {
    const c = stats('direction_eq=inbound');
    expect(c.where.match(/direction/g)).toHaveLength(1);
    expect(Object.values(c.params)).toContain('inbound');
    expect(Object.values(c.params)).not.toContain('outbound');
  });

  test('lookup statistics are untouched', () => {
    expect(stats('', 'lookup').where).toBe('1');
  });
});

describe('spec 3 §4.1 rule 5: stats `_group` keys', () => {
  test('no _group: one row of totals, no GROUP BY', () => {
    const c = stats('');
    expect(c.keys).toEqual([]);
    expect(c.groupBy).toBe('');
    expect(c.where).toBe('direction = {p0:String}');
    expect(c.limit).toBe(STATS_DEFAULT_LIMIT);
    expect(statsStatement(fakeCh, { orgId: 'o1', projectId: 'p1' }, c).query).not.toContain('GROUP BY');
  });

  test.each([
    ['hourly', [['period', 'toStartOfHour(created_at)']]],
    ['daily', [['period', 'toStartOfDay(created_at)']]],
    ['monthly', [['period', 'toStartOfMonth(created_at)']]],
    ['country', [['country', 'country']]],
    ['status', [['status', 'status']]],
    ['daily,country', [['period', 'toStartOfDay(created_at)'], ['country', 'country']]],
    ['country,status,hourly', [['country', 'country'], ['status', 'status'], ['period', 'toStartOfHour(created_at)']]],
  ])('_group=%s', (group, expected) => {
    const c = stats(`_group=${group}`);
    expect(c.keys.map((k) => [k.name, k.expression])).toEqual(expected);
    expect(c.groupBy).toBe(expected.map((_, i) => `k${i}`).join(', '));
    expect(c.orderBy).toBe(c.groupBy);
    expected.forEach(([, expression], i) => expect(c.select).toContain(`${expression} AS k${i}`));
  });

  test('the JSON form: group "monthly,status"', () => {
    const c = compileStats(parseJson({ group: 'monthly,status', filter: [{ field: 'country', operator: 'eq', value: 'DE' }] }), 'sms', { now });
    expect(c.keys.map((k) => k.token)).toEqual(['monthly', 'status']);
    expect(c.where).toBe('country = {p0:String} AND direction = {p1:String}');
  });

  test('lookups take the same keys', () => {
    expect(stats('_group=daily,status', 'lookup').keys.map((k) => k.name)).toEqual(['period', 'status']);
  });
});

describe('stats SQL shape: client values only as bound parameters', () => {
  test('SMS measures and the filter', () => {
    const c = stats('_group=daily,country&status_in=delivered|failed&text_contains=x%27%29%3B%20DROP%20TABLE%20sms_messages%3B--&createdAt_gte=3%20days%20ago');
    expect(c.where).toBe('status IN {p0:Array(String)} AND position(text, {p1:String}) > 0 AND created_at >= {p2:DateTime64(6, \'UTC\')} AND direction = {p3:String}');
    expect(c.params).toMatchObject({ p0: ['delivered', 'failed'], p1: "x'); DROP TABLE sms_messages;--", p2: '2026-11-19 12:00:00.000000' });
    for (const measure of [
      'count() AS messages', 'sum(messages_count) AS segments', 'countIf(status = {s_delivered:String}) AS n_delivered',
      'countIf(status = {s_failed:String}) AS n_failed', 'countIf(status = {s_expired:String}) AS n_expired',
      'countIf(status = {s_rejected:String}) AS n_rejected', 'countIf(status NOT IN {s_final:Array(String)}) AS pending',
      'sumIf(price_user_micros, charged AND NOT (status = {s_canceled:String} AND sent_at IS NULL)) AS cost_micros',
      "quantileExactInclusiveIf(0.5)(dateDiff('millisecond', created_at, assumeNotNull(delivered_at)), status = {s_delivered:String} AND isNotNull(delivered_at)) AS p50_delivery_ms",
    ]) expect(c.select).toContain(measure);
    expect(c.params['s_final']).toEqual(['delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown']);
    expect(c.params['s_delivered']).toBe('delivered');
    // No client value in the SQL text.
    const { query, query_params: params } = statsStatement(fakeCh, { orgId: 'o1', projectId: null }, c);
    expect(query).not.toContain('DROP');
    // The only string literals are ours: the unit of dateDiff and the time zone of a bound type.
    expect(query.match(/'[^']*'/g)).toEqual(["'millisecond'", "'UTC'"]);
    expect(query).toMatch(/^SELECT toStartOfDay\(created_at\) AS k0, country AS k1, count\(\) AS messages, .* FROM db\.sms_messages FINAL PREWHERE /);
    // Stable columns (text, created_at) before FINAL, status after it: the newest state decides.
    expect(query).toContain('PREWHERE org_id = {__org:String} AND ({__project:Nullable(String)} IS NULL OR project_id = {__project:Nullable(String)}) AND position(text, {p1:String}) > 0 AND created_at >= {p2:DateTime64(6, \'UTC\')} AND direction = {p3:String} WHERE status IN {p0:Array(String)} GROUP BY k0, k1 ORDER BY k0, k1 ASC LIMIT {__limit:UInt32} OFFSET {__offset:UInt32} SETTINGS max_execution_time = 10');
    expect(params).toMatchObject({ __org: 'o1', __project: null, __limit: STATS_DEFAULT_LIMIT, __offset: 0 });
  });

  test('lookup measures', () => {
    const c = stats('_group=country', 'lookup');
    for (const measure of [
      'count() AS lookups', 'countIf(status = {s_delivered:String}) AS n_delivered', 'countIf(status = {s_failed:String}) AS n_failed',
      'countIf(subscriber_status = {ss_active:String}) AS sub_active', 'countIf(ported) AS ported', 'sumIf(price_micros, charged) AS cost_micros',
    ]) expect(c.select).toContain(measure);
    expect(statsStatement(fakeCh, { orgId: 'o1', projectId: 'p1' }, c).query).toContain('FROM db.lookups FINAL PREWHERE');
  });

  test('_start/_limit page the group rows, up to STATS_MAX_LIMIT', () => {
    const c = stats(`_group=hourly&_start=1000&_limit=${STATS_MAX_LIMIT}`);
    expect([c.offset, c.limit]).toEqual([1000, STATS_MAX_LIMIT]);
  });
});

describe('stats: bad input is a 400 naming the parameter and the valid values', () => {
  test.each([
    ['_group=weekly', ['unknown group "weekly" in parameter "_group"', 'hourly, daily, monthly, country, status', 'daily,country']],
    ['_group=', ['unknown group "" in parameter "_group"']],
    ['_group=daily,', ['unknown group ""']],
    ['_group=Daily', ['unknown group "Daily"']],
    ['_group=%20daily', ['unknown group " daily"']],
    ['_group=to', ['unknown group "to"']],
    ['_group=text', ['unknown group "text"']],
    ['_group=daily,daily', ['group "daily" is given more than once in parameter "_group"']],
    ['_group=country,country', ['group "country" is given more than once']],
    ['_group=daily,hourly', ['groups "daily" and "hourly"', 'at most one of hourly, daily, monthly']],
    ['_group=daily,country,status,daily,country,status', ['too many groups']],
    [`_group=<10,000 characters>`.replace('<10,000 characters>', 'x'.repeat(10_000)), ['too many groups']],
    ['_group=daily&_group=monthly', ['parameter "_group" is given more than once']],
    ['_sort=createdAt:-', ['parameter "_sort" is not accepted here']],
    ['foo_eq=1', ['unknown field "foo" in parameter "foo_eq"']],
    ['status_lt=1', ['operator "lt" does not apply to string field "status"']],
    ['createdAt_gte=2026-11-22', ['createdAt_gte']],
    ['createdAt_range=1800-01-01T00:00:00Z|2600-01-01T00:00:00Z', ['createdAt_range']],
    [`_start=0&_limit=${STATS_MAX_LIMIT + 1}`, ['parameter "_limit"', `from 1 to ${STATS_MAX_LIMIT}`]],
    ['_start=0', ['"_limit" is missing']],
  ].map(([qs, fragments]) => [String(qs).slice(0, 80), qs, fragments] as const))('%s', (_label, qs, fragments) => expectError(qs as string, fragments as readonly string[]));

  test('the JSON form names _q', () => {
    const err = errorOf(() => compileStats(parseJson({ group: 'daily,weekly' }), 'sms', { now }));
    expect(err.message).toContain('unknown group "weekly" in parameter "_q"');
    expect(errorOf(() => compileStats(parseJson({ sort: [['createdAt', 'desc']] }), 'sms', { now })).message).toContain('parameter "_q" is not accepted here');
  });

  test('lookups: fields of the lookup catalogue only', () => {
    expectError('text_contains=x', ['unknown field "text"'], 'lookup');
  });
});

describe('/openapi.json documents the stats endpoints as the compiler enforces them', () => {
  type Op = { parameters: { name: string; schema: { pattern?: string; maximum?: number } }[]; responses: Record<string, unknown> };
  const doc = openApiDocument() as unknown as { paths: Record<string, { get?: Op }> };
  test.each(['/sms/stats', '/lookup/stats'])('%s: _group pattern, _limit maximum, no _sort, 400/401/429', (path) => {
    const op = doc.paths[path]?.get as Op;
    const pattern = new RegExp(op.parameters.find((p) => p.name === '_group')?.schema.pattern ?? '');
    for (const group of ['daily', 'hourly,country', 'country,status,monthly', 'status']) expect({ group, ok: pattern.test(group) }).toEqual({ group, ok: true });
    for (const group of ['weekly', '', 'daily,', 'daily,country,status,hourly,monthly,country', 'text']) expect({ group, ok: pattern.test(group) }).toEqual({ group, ok: false });
    expect(op.parameters.find((p) => p.name === '_limit')?.schema.maximum).toBe(STATS_MAX_LIMIT);
    expect(op.parameters.some((p) => p.name === '_sort')).toBe(false);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
  });
});

describe('the median of a rollup read: the live part\'s sub-buckets come with the counts', () => {
  const rolled = Array.from({ length: FINE_BUCKETS }, (_, i) => (i === 3 ? 2 : 0));
  test('the live counts of the bucket are added to the rolled parts\' sub-buckets; other buckets\' are left out', () => {
    const sum = withLiveFine(rolled, [[40, 3, '1'], [40, 10, 4], [41, 3, 9]], 40)!;
    expect(sum[3]).toBe(3);
    expect(sum[10]).toBe(4);
    expect(sum.reduce((a, b) => a + b, 0)).toBe(7);
  });
  test('the live part alone (no rolled sub-buckets), and the rolled alone (no live values in the bucket)', () => {
    expect(withLiveFine(undefined, [['40', '63', '5']], 40)).toEqual(Array.from({ length: FINE_BUCKETS }, (_, i) => (i === 63 ? 5 : 0)));
    expect(withLiveFine(rolled, [[41, 3, 9]], 40)).toBe(rolled);
    expect(withLiveFine(undefined, [], 40)).toBeUndefined();
  });
});
