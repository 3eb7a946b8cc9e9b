// Spec 3 §2.3, §2.4, §7, §8 + DESIGN §5: every client error of Grammar B is a 400
// INVALID_FILTER whose detail names the node path and the rule; and no client text (values,
// custom attribute or parameter names, event types, datasource ids) ever reaches SQL text.
import { compileFilter, ParamBinder, parseSearch, sqlContext, type SearchRequest } from '../../core/filters/grammar-b';
import { HOSTILE_VALUES } from '../support/hostile-values';
import { errorOf } from '../support/app-error';


const cond = (key: string, operator: string, values?: unknown): Record<string, unknown> => ({ type: 'attribute_condition', key, operator, ...(values === undefined ? {} : { values }) });
const inGroup = (...children: unknown[]): Record<string, unknown> => ({ version: '0.0.1', root: { type: 'group', join: 'and', children } });

const CASES: readonly (readonly [string, unknown, readonly string[]])[] = [
  ['body not an object', [], ['must be object']],
  ['version missing', { root: cond('_email', 'exists', []) }, ['version', '0.0.1']],
  ['version wrong', { version: '1.0', root: cond('_email', 'exists', []) }, ['version', '0.0.1']],
  ['unknown top-level field', { version: '0.0.1', rooot: {} }, ['unknown field "rooot"']],
  ['limit above the maximum', { version: '0.0.1', limit: 1001 }, ['limit', '1000']],
  ['limit 0 without aggregations', { version: '0.0.1', limit: 0 }, ['limit', 'only with aggregations']],
  ['unknown node type', inGroup({ type: 'nope' }), ['root.children[0].type']],
  ['unknown node field', inGroup({ type: 'group', childs: [] }), ['root.children[0]', 'childs']],
  ['unknown operator', inGroup(cond('_email', 'equals', ['x'])), ['root.children[0].operator', 'unknown operator "equals"']],
  ['no -not form for matches-bool', inGroup(cond('_is_subscribed_sms', 'matches-bool-not', [true])), ['root.children[0].operator', 'matches-bool-not']],
  ['contains below 2 characters (§8)', inGroup(cond('_email', 'contains', ['a'])), ['root.children[0].values[0]', '2 to 128 characters']],
  ['contains above 128 characters (§8)', inGroup(cond('_email', 'contains', ['x'.repeat(129)])), ['root.children[0].values[0]', '2 to 128']],
  ['contains after && counts from 1', inGroup(cond('_email', 'contains', ['&&', 'ok', 'a'])), ['root.children[0].values[2]']],
  ['startswith empty (§8)', inGroup(cond('_email', 'startswith', [''])), ['root.children[0].values[0]', '1 to 256']],
  ['matches-string empty list', inGroup(cond('_email', 'matches-string', ['&&'])), ['root.children[0].values', 'at least one']],
  ['matches-string values not strings', inGroup(cond('_email', 'matches-string', [1])), ['root.children[0].values[0]', 'strings']],
  ['matches-number values not numbers', inGroup(cond('_bucket', 'matches-number', ['1'])), ['root.children[0].values[0]', 'numbers']],
  ['matches-bool shape', inGroup(cond('_is_subscribed_sms', 'matches-bool', [true, false])), ['root.children[0].values', '[true] or [false]']],
  ['exists takes an empty array', inGroup(cond('_email', 'exists', ['x'])), ['root.children[0].values', 'empty array']],
  ['range-number unknown field', inGroup(cond('_bucket', 'range-number', { lower: 1 })), ['root.children[0].values.lower']],
  ['range-number bound type', inGroup(cond('_bucket', 'range-number', { lowerNumber: '1' })), ['root.children[0].values.lowerNumber', 'number or null']],
  ['matches-date shape', inGroup(cond('_date_imported', 'matches-date', { date: '2026-02-30' })), ['root.children[0].values.date', 'YYYY-MM-DD']],
  ['range-date bound', inGroup(cond('_date_imported', 'range-date', { lowerDate: 'yesterday' })), ['root.children[0].values.lowerDate', 'ISO']],
  ['range-date rounding type', inGroup(cond('_date_imported', 'range-date', { lowerRounding: 'yes' })), ['root.children[0].values.lowerRounding', 'boolean']],
  ['relative period', inGroup(cond('_date_imported', 'range-date-relative', { lowerOffset: -1, lowerOffsetPeriod: 'fortnight' })), ['lowerOffsetPeriod', 'min, hour, day, week, month, year']],
  ['relative offset not an integer', inGroup(cond('_date_imported', 'range-date-relative', { lowerOffset: 1.5 })), ['lowerOffset', 'integer']],
  ['anniversary on another date (rule 4)', inGroup(cond('_date_imported', 'range-date-anniversary', {})), ['root.children[0].operator', '_date_birthday']],
  ['anniversary absolute MMDD', inGroup(cond('_date_birthday', 'range-date-anniversary', { mode: 'absolute', lowerDate: '0230', upperDate: '0301' })), ['values.lowerDate', 'MMDD']],
  ['anniversary mode', inGroup(cond('_date_birthday', 'range-date-anniversary', { mode: 'sideways' })), ['values.mode']],
  ['dayversary on an attribute (rule 4)', inGroup(cond('_date_imported', 'range-date-dayversary', { lowerDay: '100', upperDay: '200' })), ['root.children[0].operator', 'created-at']],
  ['dayversary on received-at (rule 4)', inGroup({ type: 'group_event', event: 'x', children: [{ type: 'event_condition', key: 'received-at', operator: 'range-date-dayversary', values: { lowerDay: '100', upperDay: '200' } }] }), ['root.children[0].children[0].operator', 'created-at']],
  ['dayversary DHH', inGroup({ type: 'group_event', event: 'x', children: [{ type: 'event_condition', key: 'created-at', operator: 'range-date-dayversary', values: { lowerDay: '800', upperDay: '100' } }] }), ['values.lowerDay', 'DHH']],
  ['timeversary HHMM', inGroup(cond('_date_imported', 'range-date-timeversary', { mode: 'absolute', lowerTime: '2460', upperTime: '0000' })), ['values.lowerTime', 'HHMM']],
  ['geopoint without distance (§7)', inGroup(cond('_geopoint', 'geopoint-distance', { latitude: 1, longitude: 2 })), ['root.children[0].values.distance', 'requires latitude, longitude and distance']],
  ['geopoint without latitude (§7)', inGroup(cond('_geopoint', 'geopoint-distance', { longitude: 2, distance: 3 })), ['values.latitude', 'requires']],
  ['geopoint with null longitude (§7)', inGroup(cond('_geopoint', 'geopoint-distance', { latitude: 1, longitude: null, distance: 3 })), ['values.longitude', 'requires']],
  ['geopoint latitude out of range', inGroup(cond('_geopoint', 'geopoint-distance', { latitude: 91, longitude: 2, distance: 3 })), ['values.latitude', '-90']],
  ['geopoint operator on a text', inGroup(cond('_email', 'geopoint-distance', { latitude: 1, longitude: 2, distance: 3 })), ['operator', 'does not apply']],
  ['number operator on a text', inGroup(cond('_email', 'matches-number', [1])), ['root.children[0].operator', 'does not apply to "_email"']],
  ['text operator on a bool', inGroup(cond('_is_subscribed_sms', 'contains', ['ab'])), ['operator', 'does not apply']],
  ['invalid custom attribute name', inGroup(cond('bad name', 'exists', [])), ['root.children[0].key', 'custom attribute']],
  ['unknown native attribute', inGroup(cond('_nope', 'exists', [])), ['root.children[0].key']],
  ['segment operator on an attribute (rule 4)', inGroup(cond('_email', 'in-segment')), ['operator', 'segment_condition']],
  ['attribute operator on a segment (rule 4)', inGroup({ type: 'segment_condition', key: 'vips', operator: 'exists' }), ['root.children[0].operator', 'in-segment']],
  ['event_condition outside group_event', inGroup({ type: 'event_condition', key: 'created-at', operator: 'exists', values: [] }), ['root.children[0].type', 'inside a group_event']],
  ['attribute_condition inside group_event', inGroup({ type: 'group_event', event: 'x', children: [cond('_email', 'exists', [])] }), ['root.children[0].children[0].type']],
  ['group_event without event', inGroup({ type: 'group_event', children: [] }), ['root.children[0].event']],
  ['invalid parameter name', inGroup({ type: 'group_event', event: 'x', children: [{ type: 'event_condition', key: '1x', operator: 'exists', values: [] }] }), ['children[0].key', 'parameter']],
  ['sortField unknown', { version: '0.0.1', sortField: 'attrs_string' }, ['sortField', 'cannot sort']],
  ['bucket bounds', { version: '0.0.1', filterBucketMin: 10, filterBucketMax: 5 }, ['filterBucketMin']],
  ['bucket out of range (§8)', { version: '0.0.1', filterBucketIn: [200] }, ['filterBucketIn[0]']],
  ['sampling out of range (§8)', { version: '0.0.1', filterSamplingPercent: 101 }, ['filterSamplingPercent']],
  ['aggregation field without @', { version: '0.0.1', aggregations: { t: { type: 'terms', params: { field: '_tags' } } } }, ['aggregations.t.params.field', '@']],
  ['aggregation sub-aggs outside nested', { version: '0.0.1', aggregations: { t: { type: 'terms', params: { field: '@_tags' }, aggs: {} } } }, ['aggregations.t.aggs', 'nested']],
  ['nested path', { version: '0.0.1', aggregations: { n: { type: 'nested', params: { path: 'contacts' }, aggs: {} } } }, ['aggregations.n.params.path', 'events']],
];

describe('spec 3 §7: Grammar B errors are 400 naming the node path and the rule', () => {
  test.each(CASES)('%s', (_name, body, fragments) => {
    const err = errorOf(() => parseSearch(body));
    expect(err.code).toBe('INVALID_FILTER');
    expect(err.status).toBe(400);
    for (const f of fragments) expect(err.message).toContain(f);
  });

  test('a cursor request may carry only the cursor', () => {
    expect(parseSearch({ cursor: 'abc' })).toEqual({ kind: 'cursor', cursor: 'abc', limit: null });
  });
});

describe('DESIGN §5: no client text reaches SQL', () => {
  const tables = { audience: '`db`.`audience`', events: '`db`.`events`' };
  test.each(HOSTILE_VALUES.filter((v) => [...v].length >= 2 && [...v].length <= 128).map((v) => [JSON.stringify(v).slice(0, 30), v] as const))('%s in every value position', (_n, v) => {
    const body = {
      version: '0.0.1',
      root: {
        type: 'group', join: 'or', children: [
          cond('_email', 'contains', [v]), cond('_client_tags', 'matches-string', ['&&', v]), cond('plan', 'startswith', [v]),
          cond('since', 'range-date', { lowerDate: '2026-01-01', upperDate: null }),
          { type: 'group_event', event: v, datasource: [v], children: [{ type: 'event_condition', key: 'sku', operator: 'endswith', values: [v] }] },
        ],
      },
    };
    const request = parseSearch(body) as Extract<SearchRequest, { kind: 'query' }>;
    const c = sqlContext(new ParamBinder(), tables, v, 'Europe/Berlin', new Date());
    const sql = compileFilter(request.query.root, c);
    expect(sql).not.toContain(v);
    expect(sql).not.toContain("'plan'");
    expect(sql).not.toContain("'sku'");
    expect(Object.values(c.binder.params)).toEqual(expect.arrayContaining([v, 'plan', 'sku', [v]]));
  });
});
