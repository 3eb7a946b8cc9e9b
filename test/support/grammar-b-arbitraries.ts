// fast-check generators for Grammar B: random audiences and events (one project per world,
// a timezone and a "now"), and random valid filters using every operator and values shape of
// spec 3 §2.4 on every kind of key. Pools are small so that conditions match some contacts.
import fc from 'fast-check';
import { contact, type AttrValue, type ModelContact, type ModelEvent } from './audience-model';
import { instant, local } from './zoned-time';

type J = Record<string, unknown>;

export const TIMEZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Adelaide'] as const;
export const CITIES = [
  { lat: 52.52, lon: 13.405 }, { lat: 48.8566, lon: 2.3522 }, { lat: 40.7128, lon: -74.006 }, { lat: -33.8688, lon: 151.2093 },
  { lat: 35.6762, lon: 139.6503 }, { lat: 51.5074, lon: -0.1278 }, { lat: 64.1466, lon: -21.9426 },
] as const;
export const DISTANCES_KM = [0, 100, 500, 1200, 2500, 7000, 12000];

const NAMES = ['Anna', 'anne', 'ANNIKA', 'Bob', 'bobby', 'José', 'jose', 'Zoë', "O'Neil"];
const EMAILS = ['anna@example.com', 'ANNE@example.org', 'bob@test.io', 'jose@ex.es'];
const PHONES = ['+4915111111111', '+33612345678', '+12025550123'];
const COUNTRIES = ['DE', 'FR', 'US', 'ES'];
const TAGS = ['vip', 'new', 'churn', 'b2b', 'VIP'];
const CONTAINS = ['an', 'AN', 'nn', 'ob', 'sé', 'SÉ', '@ex', '.com', 'org', '+49', '15', 'vi', 'ew', 'ur', 'zz', 'ol', 'ld', 'ds'];
const PREFIXES = ['a', 'A', 'b', 'j', 'z', '.com', 'org', '+4', '1', 'v', 'n', 'ne', 'g', 'd', 'e', 'c0', 'w'];
const EXACT = [...NAMES, ...TAGS, ...COUNTRIES, 'gold', 'Gold', 'silver', 'ds1', 'ds2', 'A-1', 'web', 'app', 'purchase', 'u1', 'aud-u2'];
const NUMBERS = [0, 1, 7.5, 42, 100, -3, 5, 150, 199];
/** `_bucket` takes integers 0 to 199 only (spec 3 §8; outside is a 400). */
const BUCKETS = NUMBERS.filter((n) => Number.isInteger(n) && n >= 0 && n <= 199);
const EVENT_TYPES = ['purchase', 'view', 'signup'];
const DATASOURCES = ['ds1', 'ds2', 'ds3'];
const SPECIAL_BIRTHDAYS = ['2000-02-29', '1996-02-29', '1990-12-31', '1985-01-01', '1970-02-28', '1999-03-01'];

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
const iso = (ms: number): string => new Date(ms).toISOString();
const DAY = 86_400_000;

export interface World {
  readonly project: string;
  readonly tz: string;
  readonly now: number;
  readonly contacts: readonly ModelContact[];
  readonly events: readonly ModelEvent[];
}

const maybe = <T>(a: fc.Arbitrary<T>, freq = 3): fc.Arbitrary<T | null> => fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: freq, arbitrary: a });

/** An instant within ±400 days of now, with random seconds and milliseconds. */
const near = (now: number): fc.Arbitrary<number> => fc.oneof(
  fc.integer({ min: -400 * 1440, max: 400 * 1440 }).chain((m) => fc.integer({ min: 0, max: 59_999 }).map((ms) => now + m * 60_000 + ms)),
  fc.integer({ min: -3 * 1440, max: 3 * 1440 }).map((m) => now + m * 60_000),
);

const birthday = (now: number, tz: string): fc.Arbitrary<string> => fc.oneof(
  fc.constantFrom(...SPECIAL_BIRTHDAYS),
  fc.integer({ min: -5, max: 40 }).chain((d) => fc.integer({ min: 1950, max: 2010 }).map((y) => {
    const l = local(now + d * DAY, tz);
    const day = l.m === 2 && l.d === 29 ? 28 : l.d;
    return `${y}-${pad(l.m)}-${pad(day)}`;
  })),
  fc.date({ min: new Date('1940-01-01'), max: new Date('2015-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
);

function attrs(now: number): fc.Arbitrary<Record<string, AttrValue>> {
  return fc.record({
    plan: maybe(fc.oneof(
      fc.constantFrom('gold', 'Gold', 'silver').map((v): AttrValue => ({ t: 'string', v })),
      fc.subarray(['silver', 'bronze', 'gold', 'VIP']).map((v): AttrValue => ({ t: 'array', v })),
    )),
    score: maybe(fc.oneof(fc.constantFrom(...NUMBERS).map((v): AttrValue => ({ t: 'number', v })), fc.constant<AttrValue>({ t: 'string', v: '42' }))),
    active: maybe(fc.boolean().map((v): AttrValue => ({ t: 'bool', v }))),
    since: maybe(near(now).map((ms): AttrValue => ({ t: 'date', v: iso(ms) }))),
    meta: maybe(fc.constant<AttrValue>({ t: 'json', v: { a: [1, 2] } }), 1),
  }).map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)) as Record<string, AttrValue>);
}

function contactArb(project: string, index: number, now: number, tz: string): fc.Arbitrary<ModelContact> {
  return fc.record({
    firstName: maybe(fc.constantFrom(...NAMES)), lastName: maybe(fc.constantFrom(...NAMES)), email: maybe(fc.constantFrom(...EMAILS)),
    phoneMobile: maybe(fc.constantFrom(...PHONES)), countryCode: maybe(fc.constantFrom(...COUNTRIES)), clientTags: fc.subarray(TAGS),
    isSubscribedSms: maybe(fc.boolean()), dateBirthday: maybe(birthday(now, tz)), dateImported: maybe(near(now).map(iso)),
    geo: maybe(fc.constantFrom(...CITIES)), bucket: fc.integer({ min: 0, max: 199 }), datasourceIds: fc.subarray(DATASOURCES, { minLength: 1 }),
    attrs: attrs(now),
  }).map((r) => contact({ ...r, userId: `u${index}`, audienceId: `aud-u${index}`, project }));
}

function eventArb(project: string, contacts: number, now: number): fc.Arbitrary<Omit<ModelEvent, 'eventId'>> {
  return fc.record({
    user: fc.integer({ min: 0, max: contacts - 1 }), type: fc.constantFrom(...EVENT_TYPES), datasourceId: fc.constantFrom(...DATASOURCES),
    at: near(now), lag: fc.integer({ min: 0, max: 90_000 }), source: fc.constantFrom('web', 'app'),
    amount: maybe(fc.constantFrom(...NUMBERS)), sku: maybe(fc.constantFrom('A-1', 'B-2', 'gold')), tags: maybe(fc.subarray(TAGS, { minLength: 1 })),
    when: maybe(near(now), 1),
  }).map((r) => {
    const params: Record<string, AttrValue> = {};
    if (r.amount !== null) params['amount'] = { t: 'number', v: r.amount };
    if (r.sku !== null) params['sku'] = { t: 'string', v: r.sku };
    if (r.tags !== null) params['tags'] = { t: 'array', v: r.tags };
    if (r.when !== null) params['at'] = { t: 'date', v: iso(r.when) };
    return {
      project, userId: `u${r.user}`, audienceId: `aud-u${r.user}`, datasourceId: r.datasourceId, type: r.type, eventDate: iso(r.at),
      receivedAt: iso(r.at + r.lag), source: r.source, params,
    };
  });
}

/** "now" at a local hour of 10–20 so that offsets by days never land in a DST gap. */
export function worldArb(project: string, contacts = 60, events = 150): fc.Arbitrary<World> {
  return fc.record({
    tz: fc.constantFrom(...TIMEZONES),
    day: fc.date({ min: new Date('2025-01-01'), max: new Date('2027-12-31'), noInvalidDate: true }),
    hour: fc.integer({ min: 10, max: 20 }), minute: fc.integer({ min: 0, max: 59 }),
  }).chain(({ tz, day, hour, minute }) => {
    const now = instant(day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), hour, minute, 17, 250, tz);
    return fc.record({
      contacts: fc.tuple(...Array.from({ length: contacts }, (_, i) => contactArb(project, i, now, tz))),
      events: fc.array(eventArb(project, contacts, now), { minLength: events, maxLength: events }),
    }).map(({ contacts: cs, events: es }) => ({
      project, tz, now, contacts: cs, events: es.map((e, i) => ({ ...e, eventId: `ev${i}` })),
    }));
  });
}

// ---------------------------------------------------------------------------------------------
// Filters

const not = (op: string): fc.Arbitrary<string> => fc.constantFrom(op, `${op}-not`);
const joinArb = fc.constantFrom<'and' | 'or' | undefined>('and', 'or', undefined);

const listValues = <T>(items: fc.Arbitrary<T>): fc.Arbitrary<unknown[]> =>
  fc.tuple(fc.constantFrom(null, '&&', '||'), fc.array(items, { minLength: 1, maxLength: 3 })).map(([lead, vs]) => (lead === null ? vs : [lead, ...vs]));

const textCondition = (key: string): fc.Arbitrary<J> => fc.oneof(
  fc.record({ key: fc.constant(key), operator: not('contains'), values: listValues(fc.constantFrom(...CONTAINS)) }),
  fc.record({ key: fc.constant(key), operator: fc.oneof(not('startswith'), not('endswith')), values: listValues(fc.constantFrom(...PREFIXES)) }),
  fc.record({ key: fc.constant(key), operator: not('matches-string'), values: listValues(fc.constantFrom(...EXACT)) }),
);

const flags = { lowerExcludeEquals: fc.boolean(), upperExcludeEquals: fc.boolean() };
const numberCondition = (key: string): fc.Arbitrary<J> => {
  const numbers = key === '_bucket' ? BUCKETS : NUMBERS;
  return fc.oneof(
    fc.record({ key: fc.constant(key), operator: not('matches-number'), values: listValues(fc.constantFrom(...numbers)) }),
    fc.record({
      key: fc.constant(key), operator: not('range-number'),
      values: fc.record({ lowerNumber: maybe(fc.constantFrom(...numbers)), upperNumber: maybe(fc.constantFrom(...numbers)), ...flags }, { requiredKeys: ['lowerNumber', 'upperNumber'] }),
    }),
  );
};

function dateText(w: World): fc.Arbitrary<string> {
  return near(w.now).chain((ms) => {
    const l = local(ms, w.tz);
    const day = `${l.y}-${pad(l.m)}-${pad(l.d)}`;
    return fc.constantFrom(day, `${day}T${pad(12 + (l.h % 8))}:${pad(l.mi)}`, iso(ms).replace('.000Z', 'Z'), iso(ms));
  });
}

const PERIODS = fc.constantFrom(undefined, 'min', 'hour', 'day', 'week', 'month', 'year');
const offsetArb = (period: string | undefined): fc.Arbitrary<number | null> =>
  maybe(period === 'min' ? fc.integer({ min: -40_000, max: 40_000 }) : period === 'hour' ? fc.integer({ min: -800, max: 800 }) : fc.integer({ min: -24, max: 24 }));

function dateCondition(key: string, w: World, birthdayKey: boolean, createdAt: boolean): fc.Arbitrary<J> {
  const arbs: fc.Arbitrary<J>[] = [
    dateText(w).map((t) => ({ key, operator: 'matches-date', values: { date: t.slice(0, 10) } })),
    fc.record({
      key: fc.constant(key), operator: not('range-date'),
      values: fc.record({ lowerDate: maybe(dateText(w)), upperDate: maybe(dateText(w)), ...flags, lowerRounding: fc.boolean(), upperRounding: fc.boolean() }),
    }),
    fc.tuple(PERIODS, PERIODS).chain(([lp, up]) => fc.record({
      key: fc.constant(key), operator: not('range-date-relative'),
      values: fc.record({
        lowerOffset: offsetArb(lp), upperOffset: offsetArb(up), lowerOffsetPeriod: fc.constant(lp), upperOffsetPeriod: fc.constant(up),
        ...flags, lowerRounding: fc.boolean(), upperRounding: fc.boolean(),
      }, { requiredKeys: ['lowerOffset', 'upperOffset'] }),
    })),
    fc.oneof(
      fc.record({ mode: fc.constant('relative'), lowerOffsetMinutes: fc.integer({ min: -1500, max: 1500 }), width: fc.integer({ min: -5, max: 1500 }) })
        .map(({ lowerOffsetMinutes, width }) => ({ key, operator: 'range-date-timeversary', values: { mode: 'relative', lowerOffsetMinutes, upperOffsetMinutes: lowerOffsetMinutes + width } })),
      fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
        .map(([h1, m1, h2, m2]) => ({ key, operator: 'range-date-timeversary', values: { mode: 'absolute', lowerTime: `${pad(h1)}${pad(m1)}`, upperTime: `${pad(h2)}${pad(m2)}` } })),
    ),
  ];
  if (birthdayKey) {
    arbs.push(fc.oneof(
      fc.tuple(fc.integer({ min: -60, max: 380 }), fc.integer({ min: -2, max: 60 }), fc.boolean()).map(([lo, width, omit]) => ({
        key, operator: 'range-date-anniversary', values: omit ? { lowerOffsetDays: lo } : { mode: 'relative', lowerOffsetDays: lo, upperOffsetDays: lo + width },
      })),
      fc.tuple(fc.date({ min: new Date('2000-01-01'), max: new Date('2000-12-31'), noInvalidDate: true }), fc.date({ min: new Date('2000-01-01'), max: new Date('2000-12-31'), noInvalidDate: true }))
        .map(([a, b]) => ({ key, operator: 'range-date-anniversary', values: { mode: 'absolute', lowerDate: a.toISOString().slice(5, 10).replace('-', ''), upperDate: b.toISOString().slice(5, 10).replace('-', '') } })),
    ));
  }
  if (createdAt) {
    const dhh = fc.tuple(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 0, max: 23 })).map(([d, h]) => `${d}${pad(h)}`);
    arbs.push(fc.record({ key: fc.constant(key), operator: fc.constant('range-date-dayversary'), values: fc.record({ lowerDay: dhh, upperDay: dhh }) }));
  }
  return fc.oneof(...arbs);
}

const exists = (key: string): fc.Arbitrary<J> => fc.record({ key: fc.constant(key), operator: not('exists'), values: fc.constant([]) });
const matchAllNone = (key: string): fc.Arbitrary<J> => fc.record({ key: fc.constant(key), operator: fc.constantFrom('match-all', 'match-none') });

function attributeLeaf(w: World): fc.Arbitrary<J> {
  const text = ['_first_name', '_last_name', '_email', '_phone_mobile', '_country_code', '_universal_search', '_user_id', '_audience_id', 'plan'];
  const lists = ['_client_tags', '_datasource_ids', '_tags'];
  return fc.oneof(
    fc.constantFrom(...text, ...lists).chain(textCondition),
    fc.constantFrom('_bucket', 'score').chain(numberCondition),
    fc.record({ key: fc.constantFrom('_is_subscribed_sms', 'active'), operator: fc.constant('matches-bool'), values: fc.boolean().map((b) => [b]) }),
    fc.constantFrom('_date_imported', 'since').chain((k) => dateCondition(k, w, false, false)),
    dateCondition('_date_birthday', w, true, false),
    fc.record({
      key: fc.constant('_geopoint'), operator: fc.constant('geopoint-distance'),
      values: fc.tuple(fc.constantFrom(...CITIES), fc.constantFrom(...DISTANCES_KM)).map(([c, d]) => ({ latitude: c.lat, longitude: c.lon, distance: d })),
    }),
    fc.constantFrom(...text, ...lists, '_bucket', 'score', '_is_subscribed_sms', 'active', '_date_imported', 'since', '_date_birthday', '_geopoint', 'meta').chain(exists),
    matchAllNone('_email'),
  ).map((c) => ({ type: 'attribute_condition', ...c }));
}

function eventLeaf(w: World): fc.Arbitrary<J> {
  const text = ['event-source', 'event-type', 'audience-id', 'ds-contact-id', 'ds-id', 'ds-event-id', 'sku'];
  const lists = ['audience-ids', 'audience-ds-ids', 'audience-categories', 'audience-target-groups', 'tags'];
  return fc.oneof(
    fc.constantFrom(...text, ...lists).chain(textCondition),
    numberCondition('amount'),
    dateCondition('created-at', w, false, true),
    fc.constantFrom('received-at', 'at').chain((k) => dateCondition(k, w, false, false)),
    fc.constantFrom(...text, ...lists, 'amount', 'created-at', 'at').chain(exists),
  ).map((c) => ({ type: 'event_condition', ...c }));
}

function eventGroup(w: World): fc.Arbitrary<J> {
  const leaf = eventLeaf(w);
  const child = fc.oneof({ weight: 4, arbitrary: leaf }, { weight: 1, arbitrary: fc.record({ type: fc.constant('group'), join: joinArb, children: fc.array(leaf, { maxLength: 2 }) }) });
  return fc.record({
    type: fc.constant('group_event'), event: fc.constantFrom(...EVENT_TYPES), join: joinArb,
    datasource: fc.constantFrom(undefined, ['ds1'], ['ds2', 'ds3']), children: fc.array(child, { maxLength: 3 }),
  }, { requiredKeys: ['type', 'event', 'children'] }).map((g) => JSON.parse(JSON.stringify(g)) as J);
}

export const SEGMENT_SLUGS = ['s1', 's2', '_all', 'missing'];

export function filterArb(w: World, withSegments = true): fc.Arbitrary<J> {
  const leaves: fc.Arbitrary<J>[] = [attributeLeaf(w), attributeLeaf(w), eventGroup(w)];
  if (withSegments) leaves.push(fc.record({ type: fc.constant('segment_condition'), key: fc.constantFrom(...SEGMENT_SLUGS), operator: not('in-segment') }));
  const leaf = fc.oneof(...leaves);
  const tree = fc.letrec<{ node: J }>((tie) => ({
    node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, fc.record({ type: fc.constant('group'), join: joinArb, children: fc.array(tie('node'), { maxLength: 3 }) })
      .map((g) => JSON.parse(JSON.stringify(g)) as J)),
  })).node;
  return tree;
}

/** One filter* restriction of §2.3 (several at once nearly always leave nothing). */
export function restrictionsArb(w: World): fc.Arbitrary<J> {
  const ids = fc.subarray(w.contacts.map((c) => c.userId), { minLength: 1 });
  return fc.oneof(
    ids.map((l) => ({ filterAudienceIds: l.map((u) => `aud-${u}`) })),
    ids.map((l) => ({ filterNotAudienceIds: l.map((u) => `aud-${u}`) })),
    ids.map((l) => ({ filterContactIds: l })),
    fc.subarray(DATASOURCES).map((l) => ({ filterDatasourceIds: l })),
    fc.constantFrom('an', 'EX', '+49', 'u1', '').map((v) => ({ filterUniversalSearch: v })),
    fc.constantFrom(0, 12.5, 50, 99.99, 100).map((v) => ({ filterSamplingPercent: v })),
    fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 100, max: 199 })).map(([a, b]) => ({ filterBucketMin: a, filterBucketMax: b })),
    fc.array(fc.integer({ min: 0, max: 199 }), { maxLength: 120 }).map((v) => ({ filterBucketIn: v })),
    fc.array(fc.integer({ min: 0, max: 199 }), { maxLength: 120 }).map((v) => ({ filterBucketNotIn: v })),
  );
}
