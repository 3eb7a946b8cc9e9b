// Hand-written answers for Grammar B (spec 3 §2.4): a small audience in Europe/Berlin around
// the spring DST change (01:00Z on 29 March 2026), a 29 February birthday, year-end
// birthdays, events across the week end and midnight, and the exact contacts each filter
// returns. Checked against the reference evaluator (unit) and against ClickHouse
// (integration), so neither can drift from the spec's reading written here.
import { contact, type ModelContact, type ModelEvent } from './audience-model';

export const TZ = 'Europe/Berlin';
/** Saturday 28 March 2026, 13:00 in Berlin (CET). */
export const NOW = new Date('2026-03-28T12:00:00.000Z');

export const CONTACTS: readonly ModelContact[] = [
  contact({
    userId: 'c01', firstName: 'Anna', lastName: 'Müller', email: 'anna@example.com', phoneMobile: '+4915111111111', countryCode: 'DE',
    clientTags: ['vip', 'new'], isSubscribedSms: true, dateBirthday: '2000-02-29', dateImported: '2026-03-27T23:30:00.000Z',
    geo: { lat: 52.52, lon: 13.405 }, bucket: 5,
    attrs: { plan: { t: 'string', v: 'Gold' }, score: { t: 'number', v: 42 }, since: { t: 'date', v: '2026-03-29T00:30:00.000Z' }, meta: { t: 'json', v: { a: 1 } } },
  }),
  contact({
    userId: 'c02', firstName: 'anne', email: 'ANNE@Example.org', countryCode: 'FR', clientTags: ['vip'], isSubscribedSms: false, datasourceIds: ['ds1', 'ds2'],
    dateBirthday: '1990-12-31', dateImported: '2026-03-28T22:59:59.999Z', geo: { lat: 48.8566, lon: 2.3522 }, bucket: 150,
    attrs: { plan: { t: 'array', v: ['silver', 'bronze'] }, score: { t: 'number', v: 7.5 } },
  }),
  contact({ userId: 'c03', bucket: 199 }),
  contact({
    userId: 'c04', firstName: "O'Brien", lastName: 'Ünal', countryCode: 'US', clientTags: ['b2b'], dateBirthday: '1985-01-01',
    dateImported: '2026-01-15T10:00:00.000Z', geo: { lat: 40.7128, lon: -74.006 }, bucket: 0,
    attrs: { active: { t: 'bool', v: true }, plan: { t: 'string', v: 'gold' } },
  }),
  // Another project: a look-alike that no filter of p1 may return.
  contact({ userId: 'c05', project: 'p2', firstName: 'Anna', clientTags: ['vip'], bucket: 5 }),
];

const ev = (id: string, userId: string, type: string, ds: string, at: string, source: string, params: ModelEvent['params'] = {}, project = 'p1'): ModelEvent =>
  ({ project, userId, audienceId: `aud-${userId}`, datasourceId: ds, eventId: id, type, eventDate: at, receivedAt: at, source, params });

export const EVENTS: readonly ModelEvent[] = [
  // Friday 11:00 Berlin
  ev('e1', 'c01', 'purchase', 'ds1', '2026-03-27T10:00:00.000Z', 'web', { amount: { t: 'number', v: 30 }, sku: { t: 'string', v: 'A-1' } }),
  ev('e2', 'c01', 'view', 'ds2', '2026-03-28T11:00:00.000Z', 'app'),
  // Monday 00:30 Berlin (CET), just after the week end
  ev('e3', 'c02', 'purchase', 'ds2', '2026-03-22T23:30:00.000Z', 'app', { amount: { t: 'number', v: 5 }, sku: { t: 'string', v: 'B-2' } }),
  // Monday 00:30 Berlin (CEST), the day after the DST change
  ev('e5', 'c04', 'purchase', 'ds1', '2026-03-29T22:30:00.000Z', 'web', { amount: { t: 'number', v: 100 }, tags: { t: 'array', v: ['promo'] } }),
  ev('e4', 'c05', 'purchase', 'ds1', '2026-03-27T10:00:00.000Z', 'web', { amount: { t: 'number', v: 30 } }, 'p2'),
];

export const SEGMENTS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['vips', { type: 'attribute_condition', key: '_client_tags', operator: 'matches-string', values: ['vip'] }],
  ['buyers', { type: 'group_event', event: 'purchase', children: [] }],
  ['vip-buyers', { type: 'group', join: 'and', children: [{ type: 'segment_condition', key: 'vips', operator: 'in-segment' }, { type: 'segment_condition', key: 'buyers', operator: 'in-segment' }] }],
]);

type J = Record<string, unknown>;
const a = (key: string, operator: string, values?: unknown): J => ({ type: 'attribute_condition', key, operator, ...(values === undefined ? {} : { values }) });
const e = (key: string, operator: string, values?: unknown): J => ({ type: 'event_condition', key, operator, ...(values === undefined ? {} : { values }) });
const g = (join: 'and' | 'or', ...children: J[]): J => ({ type: 'group', join, children });
const ge = (event: string, children: J[], extra: J = {}): J => ({ type: 'group_event', event, children, ...extra });
const s = (key: string, operator = 'in-segment'): J => ({ type: 'segment_condition', key, operator });

export interface Case { readonly name: string; readonly root: J; readonly expected: readonly string[] }

const ALL = ['c01', 'c02', 'c03', 'c04'];

export const CASES: readonly Case[] = [
  { name: 'match-all', root: a('_email', 'match-all'), expected: ALL },
  { name: 'match-none', root: a('_email', 'match-none'), expected: [] },
  { name: 'match-all without a key', root: { type: 'attribute_condition', operator: 'match-all' }, expected: ALL },
  { name: 'match-none without a key, inside an event group', root: ge('purchase', [{ type: 'event_condition', operator: 'match-none' }], { join: 'or' }), expected: [] },
  { name: 'exists on a nullable text', root: a('_first_name', 'exists', []), expected: ['c01', 'c02', 'c04'] },
  { name: 'exists-not matches the absent (rule 1)', root: a('_first_name', 'exists-not', []), expected: ['c03'] },
  { name: 'exists on tags: an empty list is absent', root: a('_client_tags', 'exists', []), expected: ['c01', 'c02', 'c04'] },
  { name: 'exists-not on tags', root: a('_client_tags', 'exists-not', []), expected: ['c03'] },
  { name: 'exists on _tags (always empty today)', root: a('_tags', 'exists', []), expected: [] },
  { name: 'contains is case-insensitive', root: a('_first_name', 'contains', ['ANN']), expected: ['c01', 'c02'] },
  { name: 'contains-not includes the absent', root: a('_first_name', 'contains-not', ['ann']), expected: ['c03', 'c04'] },
  { name: 'startswith', root: a('_email', 'startswith', ['anne@']), expected: ['c02'] },
  { name: 'endswith is case-insensitive', root: a('_email', 'endswith', ['.COM']), expected: ['c01'] },
  { name: 'contains with && on a text: every value', root: a('_email', 'contains', ['&&', 'anna', 'example']), expected: ['c01'] },
  { name: 'contains with || on a text: any value', root: a('_email', 'contains', ['||', 'anna', 'org']), expected: ['c01', 'c02'] },
  { name: 'matches-string is exact and case-sensitive', root: a('_first_name', 'matches-string', ['anna']), expected: [] },
  { name: 'matches-string exact', root: a('_first_name', 'matches-string', ['Anna']), expected: ['c01'] },
  { name: 'matches-string-not includes the absent', root: a('_first_name', 'matches-string-not', ['Anna']), expected: ['c02', 'c03', 'c04'] },
  { name: 'tags && : all of them', root: a('_client_tags', 'matches-string', ['&&', 'vip', 'new']), expected: ['c01'] },
  { name: 'tags || : any of them', root: a('_client_tags', 'matches-string', ['||', 'b2b', 'new']), expected: ['c01', 'c04'] },
  { name: 'tags default is ||', root: a('_client_tags', 'matches-string', ['b2b', 'new']), expected: ['c01', 'c04'] },
  { name: 'tags -not includes contacts without tags', root: a('_client_tags', 'matches-string-not', ['vip']), expected: ['c03', 'c04'] },
  { name: 'contains on a list: some element', root: a('_client_tags', 'contains', ['2B']), expected: ['c04'] },
  { name: 'matches-bool true', root: a('_is_subscribed_sms', 'matches-bool', [true]), expected: ['c01'] },
  { name: 'matches-bool false (absent is not false)', root: a('_is_subscribed_sms', 'matches-bool', [false]), expected: ['c02'] },
  { name: 'matches-number on a custom number', root: a('score', 'matches-number', [42]), expected: ['c01'] },
  { name: 'matches-number || of decimals', root: a('score', 'matches-number', ['||', 7.5, 42]), expected: ['c01', 'c02'] },
  { name: 'matches-number-not includes the absent', root: a('score', 'matches-number-not', [42]), expected: ['c02', 'c03', 'c04'] },
  { name: 'range-number lower excluded', root: a('score', 'range-number', { lowerNumber: 7.5, upperNumber: null, lowerExcludeEquals: true }), expected: ['c01'] },
  { name: 'range-number lower included', root: a('score', 'range-number', { lowerNumber: 7.5, upperNumber: 42 }), expected: ['c01', 'c02'] },
  { name: 'range-number upper excluded', root: a('score', 'range-number', { lowerNumber: 7.5, upperNumber: 42, upperExcludeEquals: true }), expected: ['c02'] },
  { name: 'range-number both null: everything', root: a('score', 'range-number', { lowerNumber: null, upperNumber: null }), expected: ALL },
  { name: 'range-number-not both null: nothing', root: a('score', 'range-number-not', { lowerNumber: null, upperNumber: null }), expected: [] },
  { name: 'range-number on _bucket', root: a('_bucket', 'range-number', { lowerNumber: 0, upperNumber: 5 }), expected: ['c01', 'c04'] },
  { name: 'range-number-not on _bucket', root: a('_bucket', 'range-number-not', { lowerNumber: 0, upperNumber: 5, upperExcludeEquals: true }), expected: ['c01', 'c02', 'c03'] },
  { name: '_bucket matches-number', root: a('_bucket', 'matches-number', [199]), expected: ['c03'] },
  { name: 'matches-date: the whole day in the project timezone', root: a('_date_imported', 'matches-date', { date: '2026-03-28' }), expected: ['c01', 'c02'] },
  { name: 'matches-date on the day before (UTC would say c01)', root: a('_date_imported', 'matches-date', { date: '2026-03-27' }), expected: [] },
  { name: 'matches-date on a birthday', root: a('_date_birthday', 'matches-date', { date: '1990-12-31' }), expected: ['c02'] },
  { name: 'range-date with upper rounding to the end of the day', root: a('_date_imported', 'range-date', { lowerDate: '2026-03-28', upperDate: '2026-03-28', upperRounding: true }), expected: ['c01', 'c02'] },
  { name: 'range-date without rounding: the day is an instant', root: a('_date_imported', 'range-date', { lowerDate: '2026-03-28', upperDate: '2026-03-28' }), expected: [] },
  { name: 'range-date with an offset datetime', root: a('_date_imported', 'range-date', { lowerDate: '2026-03-27T23:30:00Z', upperDate: null }), expected: ['c01', 'c02'] },
  { name: 'range-date lower excluded', root: a('_date_imported', 'range-date', { lowerDate: '2026-03-27T23:30:00Z', upperDate: null, lowerExcludeEquals: true }), expected: ['c02'] },
  { name: 'range-date lower rounding to the start of the day', root: a('_date_imported', 'range-date', { lowerDate: '2026-03-28T12:00', lowerRounding: true, upperDate: null }), expected: ['c01', 'c02'] },
  { name: 'range-date-not includes the absent', root: a('_date_imported', 'range-date-not', { lowerDate: '2026-03-01', upperDate: null }), expected: ['c03', 'c04'] },
  { name: 'range-date on a custom date across the DST change', root: a('since', 'matches-date', { date: '2026-03-29' }), expected: ['c01'] },
  { name: 'range-date-relative: the last day', root: a('_date_imported', 'range-date-relative', { lowerOffset: -1, upperOffset: 0 }), expected: ['c01'] },
  { name: 'range-date-relative: the last 3 months', root: a('_date_imported', 'range-date-relative', { lowerOffset: -3, lowerOffsetPeriod: 'month', upperOffset: 0 }), expected: ['c01', 'c04'] },
  { name: 'range-date-relative: hours', root: a('_date_imported', 'range-date-relative', { lowerOffset: -13, lowerOffsetPeriod: 'hour', upperOffset: null }), expected: ['c01', 'c02'] },
  { name: 'range-date-relative: minutes, excluded', root: a('_date_imported', 'range-date-relative', { lowerOffset: -750, lowerOffsetPeriod: 'min', lowerExcludeEquals: true, upperOffset: null }), expected: ['c02'] },
  { name: 'range-date-relative: this week to the end of tomorrow', root: a('since', 'range-date-relative', { lowerOffset: -1, lowerOffsetPeriod: 'week', upperOffset: 1, upperRounding: true }), expected: ['c01'] },
  { name: 'range-date-relative: a year', root: a('_date_birthday', 'range-date-relative', { lowerOffset: -30, lowerOffsetPeriod: 'year', upperOffset: null }), expected: ['c01'] },
  { name: 'range-date-relative-not', root: a('_date_imported', 'range-date-relative-not', { lowerOffset: -1, upperOffset: 0 }), expected: ['c02', 'c03', 'c04'] },
  { name: 'anniversary: 29 February falls on 28 February in 2026', root: a('_date_birthday', 'range-date-anniversary', { lowerOffsetDays: -28, upperOffsetDays: -27 }), expected: ['c01'] },
  { name: 'anniversary: not on 1 March', root: a('_date_birthday', 'range-date-anniversary', { lowerOffsetDays: -27, upperOffsetDays: -26 }), expected: [] },
  { name: 'anniversary: relative window over the year end', root: a('_date_birthday', 'range-date-anniversary', { mode: 'relative', lowerOffsetDays: 278, upperOffsetDays: 280 }), expected: ['c02', 'c04'] },
  { name: 'anniversary: upper is exclusive', root: a('_date_birthday', 'range-date-anniversary', { lowerOffsetDays: 278, upperOffsetDays: 279 }), expected: ['c02'] },
  { name: 'anniversary: absolute inverted range wraps the year end', root: a('_date_birthday', 'range-date-anniversary', { mode: 'absolute', lowerDate: '1230', upperDate: '0102' }), expected: ['c02', 'c04'] },
  { name: 'anniversary: absolute 0229', root: a('_date_birthday', 'range-date-anniversary', { mode: 'absolute', lowerDate: '0229', upperDate: '0229' }), expected: ['c01'] },
  { name: 'dayversary: Monday 00 (both sides of the DST change)', root: ge('purchase', [e('created-at', 'range-date-dayversary', { lowerDay: '100', upperDay: '100' })]), expected: ['c02', 'c04'] },
  { name: 'dayversary: wraps over the week end', root: ge('purchase', [e('created-at', 'range-date-dayversary', { lowerDay: '623', upperDay: '101' })]), expected: ['c02', 'c04'] },
  { name: 'dayversary: Friday 11', root: ge('purchase', [e('created-at', 'range-date-dayversary', { lowerDay: '511', upperDay: '511' })]), expected: ['c01'] },
  { name: 'timeversary absolute', root: a('_date_imported', 'range-date-timeversary', { mode: 'absolute', lowerTime: '0000', upperTime: '0045' }), expected: ['c01'] },
  { name: 'timeversary absolute wraps midnight', root: a('_date_imported', 'range-date-timeversary', { mode: 'absolute', lowerTime: '2330', upperTime: '0045' }), expected: ['c01', 'c02'] },
  { name: 'timeversary relative (now is 13:00 local)', root: a('_date_imported', 'range-date-timeversary', { lowerOffsetMinutes: -780, upperOffsetMinutes: -734 }), expected: ['c01'] },
  { name: 'timeversary relative wrapping midnight', root: a('_date_imported', 'range-date-timeversary', { lowerOffsetMinutes: -781, upperOffsetMinutes: -734 }), expected: ['c01', 'c02'] },
  { name: 'geopoint-distance: Berlin–Paris is 878 km', root: a('_geopoint', 'geopoint-distance', { latitude: 52.52, longitude: 13.405, distance: 900 }), expected: ['c01', 'c02'] },
  { name: 'geopoint-distance: 800 km', root: a('_geopoint', 'geopoint-distance', { latitude: 52.52, longitude: 13.405, distance: 800 }), expected: ['c01'] },
  { name: 'geopoint-distance over the Atlantic', root: a('_geopoint', 'geopoint-distance', { latitude: 48.8566, longitude: 2.3522, distance: 6000 }), expected: ['c01', 'c02', 'c04'] },
  { name: '_universal_search is case-insensitive', root: a('_universal_search', 'contains', ['MÜLLER']), expected: ['c01'] },
  { name: '_universal_search covers the phone', root: a('_universal_search', 'contains', ['+49151']), expected: ['c01'] },
  { name: 'custom text and list under one name', root: a('plan', 'contains', ['ol']), expected: ['c01', 'c04'] },
  { name: 'custom list matches-string', root: a('plan', 'matches-string', ['&&', 'silver', 'bronze']), expected: ['c02'] },
  { name: 'custom exists in any map', root: a('plan', 'exists', []), expected: ['c01', 'c02', 'c04'] },
  { name: 'custom json exists', root: a('meta', 'exists', []), expected: ['c01'] },
  { name: 'custom bool', root: a('active', 'matches-bool', [true]), expected: ['c04'] },
  { name: 'a number operator does not match a text of the same name', root: a('plan', 'matches-number', [1]), expected: [] },
  { name: 'group or', root: g('or', a('_country_code', 'matches-string', ['FR']), a('_country_code', 'matches-string', ['US'])), expected: ['c02', 'c04'] },
  { name: 'group and with a nested or', root: g('and', a('_client_tags', 'exists', []), g('or', a('_bucket', 'matches-number', [0]), a('_bucket', 'matches-number', [150]))), expected: ['c02', 'c04'] },
  { name: 'empty and group matches all', root: g('and'), expected: ALL },
  { name: 'group default join is and', root: { type: 'group', children: [a('_first_name', 'exists', []), a('_email', 'exists', [])] }, expected: ['c01', 'c02'] },
  { name: 'group_event with no conditions', root: ge('purchase', []), expected: ['c01', 'c02', 'c04'] },
  { name: 'group_event restricted to a datasource', root: ge('purchase', [], { datasource: ['ds2'] }), expected: ['c02'] },
  { name: 'event parameter range', root: ge('purchase', [e('amount', 'range-number', { lowerNumber: 30, upperNumber: null })]), expected: ['c01', 'c04'] },
  { name: 'event conditions joined by or hold on one event', root: ge('purchase', [e('sku', 'matches-string', ['B-2']), e('amount', 'matches-number', [100])], { join: 'or' }), expected: ['c02', 'c04'] },
  { name: 'event conditions on the same event (and)', root: ge('purchase', [e('sku', 'matches-string', ['A-1']), e('amount', 'matches-number', [5])]), expected: [] },
  { name: 'event-source', root: ge('purchase', [e('event-source', 'matches-string', ['app'])]), expected: ['c02'] },
  { name: 'ds-id', root: ge('view', [e('ds-id', 'matches-string', ['ds1'])]), expected: [] },
  { name: 'ds-event-id', root: ge('purchase', [e('ds-event-id', 'matches-string', ['e5'])]), expected: ['c04'] },
  { name: 'ds-contact-id', root: ge('purchase', [e('ds-contact-id', 'startswith', ['c0'])]), expected: ['c01', 'c02', 'c04'] },
  { name: 'audience-id and audience-ids', root: ge('purchase', [e('audience-id', 'matches-string', ['aud-c01']), e('audience-ids', 'matches-string', ['aud-c01'])]), expected: ['c01'] },
  { name: 'audience-ds-ids: the contact\'s datasources', root: ge('purchase', [e('audience-ds-ids', 'matches-string', ['ds2'])]), expected: ['c02'] },
  { name: 'audience-categories are always empty', root: ge('purchase', [e('audience-categories', 'exists', [])]), expected: [] },
  { name: 'audience-target-groups-not', root: ge('purchase', [e('audience-target-groups', 'matches-string-not', ['x'])]), expected: ['c01', 'c02', 'c04'] },
  { name: 'created-at matches-date in the project timezone', root: ge('purchase', [e('created-at', 'matches-date', { date: '2026-03-30' })]), expected: ['c04'] },
  { name: 'received-at relative', root: ge('purchase', [e('received-at', 'range-date-relative', { lowerOffset: -2, upperOffset: 0 })]), expected: ['c01'] },
  { name: 'event-type', root: ge('view', [e('event-type', 'matches-string', ['view'])]), expected: ['c01'] },
  { name: 'event list parameter', root: ge('purchase', [e('tags', 'matches-string', ['promo'])]), expected: ['c04'] },
  { name: 'event condition -not on a missing parameter', root: ge('purchase', [e('sku', 'exists-not', [])]), expected: ['c04'] },
  { name: 'segment', root: s('vips'), expected: ['c01', 'c02'] },
  { name: 'segment not', root: s('vips', 'in-segment-not'), expected: ['c03', 'c04'] },
  { name: 'segment of segments', root: s('vip-buyers'), expected: ['c01', 'c02'] },
  { name: 'segment _all', root: s('_all'), expected: ALL },
  { name: 'missing segment matches none', root: s('nobody-made-this'), expected: [] },
  { name: 'missing segment, negated, matches all', root: s('nobody-made-this', 'in-segment-not'), expected: ALL },
];

// The autumn DST change in America/New_York: on Sunday 1 November 2026 at 06:00Z, 02:00 EDT
// becomes 01:00 EST; that local day has 25 hours and two 01:30s. Project p3.
export const AUTUMN_TZ = 'America/New_York';
/** Sunday 1 November 2026, 13:00 EST. */
export const AUTUMN_NOW = new Date('2026-11-01T18:00:00.000Z');

const imported = (userId: string, at: string): ModelContact => contact({ userId, project: 'p3', dateImported: at });
export const AUTUMN_CONTACTS: readonly ModelContact[] = [
  imported('d1', '2026-11-01T05:30:00.000Z'), // 01:30 EDT
  imported('d2', '2026-11-01T06:30:00.000Z'), // 01:30 EST, the second 01:30
  imported('d3', '2026-11-01T04:30:00.000Z'), // 00:30 EDT
  imported('d4', '2026-10-31T04:30:00.000Z'), // 00:30 EDT the day before
  imported('d5', '2026-11-02T04:59:59.999Z'), // 23:59:59.999 EST, the last instant of the long day
  imported('d6', '2026-11-02T05:00:00.000Z'), // 00:00 EST the day after
  imported('d7', '2026-10-31T17:30:00.000Z'), // 13:30 EDT the day before: within one calendar day of now, not within 24 hours
];

export const AUTUMN_CASES: readonly Case[] = [
  { name: 'matches-date: the 25-hour day', root: a('_date_imported', 'matches-date', { date: '2026-11-01' }), expected: ['d1', 'd2', 'd3', 'd5'] },
  { name: 'timeversary: both 01:30s', root: a('_date_imported', 'range-date-timeversary', { mode: 'absolute', lowerTime: '0130', upperTime: '0130' }), expected: ['d1', 'd2'] },
  { name: 'relative: one calendar day keeps the wall time (25 hours back)', root: a('_date_imported', 'range-date-relative', { lowerOffset: -1, upperOffset: 0 }), expected: ['d1', 'd2', 'd3', 'd7'] },
  { name: 'relative: 24 hours are elapsed time', root: a('_date_imported', 'range-date-relative', { lowerOffset: -24, lowerOffsetPeriod: 'hour', upperOffset: 0 }), expected: ['d1', 'd2', 'd3'] },
  { name: 'range-date: the whole local day with upper rounding', root: a('_date_imported', 'range-date', { lowerDate: '2026-11-01', upperDate: '2026-11-01', upperRounding: true }), expected: ['d1', 'd2', 'd3', 'd5'] },
  { name: 'relative: today, rounded at both ends', root: a('_date_imported', 'range-date-relative', { lowerOffset: 0, upperOffset: 0, lowerRounding: true, upperRounding: true }), expected: ['d1', 'd2', 'd3', 'd5'] },
  { name: 'relative-not: outside today', root: a('_date_imported', 'range-date-relative-not', { lowerOffset: 0, upperOffset: 0, lowerRounding: true, upperRounding: true }), expected: ['d4', 'd6', 'd7'] },
  { name: 'range-date: a local datetime in the repeated hour is read as in ClickHouse', root: a('_date_imported', 'range-date', { lowerDate: '2026-11-01T00:00', upperDate: '2026-11-01T01:00', upperExcludeEquals: true }), expected: ['d3'] },
];
