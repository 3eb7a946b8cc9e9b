// The reference evaluator of Grammar B, written from spec 3 §2.3, §2.4 and docs/grammar-b.md
// alone, in memory, sharing no code with the compiler (core/filters/grammar-b): it reads the
// raw filter JSON, the model contacts and events, and answers which contacts match. Only
// valid filters are given to it (the parser's errors are tested elsewhere).
import { crc32 } from 'node:zlib';
import type { AttrValue, ModelContact, ModelEvent } from './audience-model';
import { universalSearch } from './audience-model';
import { addDaysTo, addPeriod, daysIn, endOfLocalDay, instant, local, parseIsoIn, startOfLocalDay } from './zoned-time';

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface World {
  readonly tz: string;
  readonly now: number;
  readonly segments: ReadonlyMap<string, unknown>;
  readonly eventsOf: (userId: string) => readonly ModelEvent[];
}

/** A value as the evaluator sees an attribute: typed, or absent. */
type Value =
  | { t: 'string'; v: string } | { t: 'strings'; v: readonly string[] } | { t: 'number'; v: number } | { t: 'bool'; v: boolean }
  | { t: 'instant'; v: number } | { t: 'day'; v: string } | { t: 'geo'; lat: number; lon: number } | { t: 'json' } | null;

const ms = (iso: string): number => Date.parse(iso);

function fromAttr(a: AttrValue | undefined): Value {
  if (a === undefined) return null;
  switch (a.t) {
    case 'string': return { t: 'string', v: a.v };
    case 'number': return { t: 'number', v: a.v };
    case 'bool': return { t: 'bool', v: a.v };
    case 'date': return { t: 'instant', v: ms(a.v) };
    case 'array': return a.v.length === 0 ? null : { t: 'strings', v: a.v };
    case 'json': return { t: 'json' };
  }
}

const str = (v: string | null): Value => (v === null ? null : { t: 'string', v });

function contactValue(c: ModelContact, key: string): Value {
  switch (key) {
    case '_user_id': return { t: 'string', v: c.userId };
    case '_audience_id': return { t: 'string', v: c.audienceId };
    case '_datasource_ids': return { t: 'strings', v: c.datasourceIds };
    case '_first_name': return str(c.firstName);
    case '_last_name': return str(c.lastName);
    case '_email': return str(c.email);
    case '_phone_mobile': return str(c.phoneMobile);
    case '_country_code': return str(c.countryCode);
    case '_client_tags': return { t: 'strings', v: c.clientTags };
    case '_tags': return { t: 'strings', v: [] };
    case '_is_subscribed_sms': return c.isSubscribedSms === null ? null : { t: 'bool', v: c.isSubscribedSms };
    case '_date_birthday': return c.dateBirthday === null ? null : { t: 'day', v: c.dateBirthday };
    case '_date_imported': return c.dateImported === null ? null : { t: 'instant', v: ms(c.dateImported) };
    case '_geopoint': return c.geo === null ? null : { t: 'geo', lat: c.geo.lat, lon: c.geo.lon };
    case '_universal_search': return { t: 'string', v: universalSearch(c) };
    case '_bucket': return { t: 'number', v: c.bucket };
    default: return fromAttr(c.attrs[key]);
  }
}

function eventValue(e: ModelEvent, c: ModelContact, key: string): Value {
  switch (key) {
    case 'created-at': return { t: 'instant', v: ms(e.eventDate) };
    case 'received-at': return { t: 'instant', v: ms(e.receivedAt) };
    case 'event-source': return { t: 'string', v: e.source };
    case 'event-type': return { t: 'string', v: e.type };
    case 'audience-id': return { t: 'string', v: e.audienceId };
    case 'audience-ids': return { t: 'strings', v: [e.audienceId] };
    case 'audience-ds-ids': return { t: 'strings', v: c.datasourceIds };
    case 'audience-categories': case 'audience-target-groups': return { t: 'strings', v: [] };
    case 'ds-contact-id': return { t: 'string', v: e.userId };
    case 'ds-id': return { t: 'string', v: e.datasourceId };
    case 'ds-event-id': return { t: 'string', v: e.eventId };
    default: return fromAttr(e.params[key]);
  }
}

function present(v: Value): boolean {
  if (v === null) return false;
  if (v.t === 'strings') return v.v.length > 0;
  if (v.t === 'string') return true;
  return true;
}

function listed(values: readonly unknown[]): { all: boolean; items: unknown[] } {
  if (values[0] === '&&') return { all: true, items: values.slice(1) };
  if (values[0] === '||') return { all: false, items: values.slice(1) };
  return { all: false, items: [...values] };
}

const some = (all: boolean, items: unknown[], f: (x: unknown) => boolean): boolean => (all ? items.every(f) : items.some(f));

function textMatch(op: string, x: string, v: string): boolean {
  if (op === 'matches-string') return x === v;
  const [a, b] = [x.toLowerCase(), v.toLowerCase()];
  if (op === 'contains') return a.includes(b);
  if (op === 'startswith') return a.startsWith(b);
  return a.endsWith(b);
}

function instantOf(v: Value, w: World): number | null {
  if (v?.t === 'instant') return v.v;
  if (v?.t === 'day') return parseIsoIn(v.v, w.tz);
  return null;
}

function inRange(x: number, lo: number | null, hi: number | null, j: J): boolean {
  if (lo !== null && (j['lowerExcludeEquals'] ? !(x > lo) : !(x >= lo))) return false;
  if (hi !== null && (j['upperExcludeEquals'] ? !(x < hi) : !(x <= hi))) return false;
  return true;
}

const nul = (x: unknown): boolean => x === undefined || x === null;

/** Is the anniversary of `day` (YYYY-MM-DD) on the local date (y, m, d)? 29 Feb → 28 Feb in common years. */
function anniversaryOn(day: string, y: number, m: number, d: number): boolean {
  const [bm, bd] = [Number(day.slice(5, 7)), Number(day.slice(8, 10))];
  return bm === m && Math.min(bd, daysIn(y, bm)) === d;
}

function haversineMetres(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = (x: number): number => (x * Math.PI) / 180;
  const a = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lon2 - lon1) / 2) ** 2;
  return 2 * 6_372_797.560856 * Math.asin(Math.sqrt(a));
}

/** The positive form of a condition on a value (absent → false). */
function positive(op: string, values: J, v: Value, w: World): boolean {
  if (op === 'exists') return present(v);
  if (v === null) return false;
  switch (op) {
    case 'matches-bool': return v.t === 'bool' && v.v === values[0];
    case 'contains': case 'startswith': case 'endswith': case 'matches-string': {
      const { all, items } = listed(values as unknown[]);
      if (v.t === 'string') return some(all, items, (s) => textMatch(op, v.v, s as string));
      if (v.t === 'strings') return some(all, items, (s) => v.v.some((x) => textMatch(op, x, s as string)));
      return false;
    }
    case 'matches-number': {
      const { all, items } = listed(values as unknown[]);
      return v.t === 'number' && some(all, items, (n) => v.v === n);
    }
    case 'range-number':
      return v.t === 'number' && inRange(v.v, values['lowerNumber'] ?? null, values['upperNumber'] ?? null, values);
    case 'matches-date': {
      if (v.t === 'day') return v.v === values['date'];
      if (v.t !== 'instant') return false;
      const l = local(v.v, w.tz);
      return `${l.y}-${String(l.m).padStart(2, '0')}-${String(l.d).padStart(2, '0')}` === values['date'];
    }
    case 'range-date': {
      const x = instantOf(v, w);
      if (x === null) return false;
      const bound = (text: unknown, rounding: boolean, end: boolean): number | null => {
        if (nul(text)) return null;
        const t = parseIsoIn(text as string, w.tz);
        return rounding ? (end ? endOfLocalDay(t, w.tz) : startOfLocalDay(t, w.tz)) : t;
      };
      return inRange(x, bound(values['lowerDate'], values['lowerRounding'] === true, false), bound(values['upperDate'], values['upperRounding'] === true, true), values);
    }
    case 'range-date-relative': {
      const x = instantOf(v, w);
      if (x === null) return false;
      const bound = (offset: unknown, period: unknown, rounding: boolean, end: boolean): number | null => {
        if (nul(offset)) return null;
        const t = addPeriod(w.now, offset as number, (period as string | undefined) ?? 'day', w.tz);
        return rounding ? (end ? endOfLocalDay(t, w.tz) : startOfLocalDay(t, w.tz)) : t;
      };
      return inRange(x, bound(values['lowerOffset'], values['lowerOffsetPeriod'], values['lowerRounding'] === true, false),
        bound(values['upperOffset'], values['upperOffsetPeriod'], values['upperRounding'] === true, true), values);
    }
    case 'range-date-anniversary': {
      if (v.t !== 'day') return false;
      if (values['mode'] === 'absolute') {
        const key = Number(v.v.slice(5, 7)) * 100 + Number(v.v.slice(8, 10));
        const [lo, hi] = [Number(values['lowerDate']), Number(values['upperDate'])];
        return lo <= hi ? key >= lo && key <= hi : key >= lo || key <= hi;
      }
      const lower = (values['lowerOffsetDays'] as number | undefined) ?? 0;
      const upper = (values['upperOffsetDays'] as number | undefined) ?? 1;
      const today = local(w.now, w.tz);
      for (let i = lower; i < upper && i < lower + 800; i += 1) {
        const d = addDaysTo(today.y, today.m, today.d, i);
        if (anniversaryOn(v.v, d.y, d.m, d.d)) return true;
      }
      return false;
    }
    case 'range-date-dayversary': {
      const x = instantOf(v, w);
      if (x === null) return false;
      const l = local(x, w.tz);
      const key = (l.dow - 1) * 24 + l.h;
      const k = (s: string): number => (Number(s[0]) - 1) * 24 + Number(s.slice(1));
      const [lo, hi] = [k(values['lowerDay']), k(values['upperDay'])];
      return lo <= hi ? key >= lo && key <= hi : key >= lo || key <= hi;
    }
    case 'range-date-timeversary': {
      const x = instantOf(v, w);
      if (x === null) return false;
      const l = local(x, w.tz);
      const minute = l.h * 60 + l.mi;
      if (values['mode'] === 'absolute') {
        const k = (s: string): number => Number(s.replace(':', '').slice(0, 2)) * 60 + Number(s.replace(':', '').slice(2));
        const [lo, hi] = [k(values['lowerTime']), k(values['upperTime'])];
        return lo <= hi ? minute >= lo && minute <= hi : minute >= lo || minute <= hi;
      }
      const n = local(w.now, w.tz);
      const lower = (values['lowerOffsetMinutes'] as number | undefined) ?? 0;
      const upper = (values['upperOffsetMinutes'] as number | undefined) ?? 1;
      for (let i = lower; i < upper && i < lower + 1440; i += 1) {
        if ((((n.h * 60 + n.mi + i) % 1440) + 1440) % 1440 === minute) return true;
      }
      return false;
    }
    case 'geopoint-distance':
      return v.t === 'geo' && haversineMetres(values['latitude'], values['longitude'], v.lat, v.lon) <= values['distance'] * 1000;
    default:
      throw new Error(`evaluator: unknown operator ${op}`);
  }
}

function condition(node: J, v: Value, w: World): boolean {
  const op = node['operator'] as string;
  if (op === 'match-all') return true;
  if (op === 'match-none') return false;
  const negate = op.endsWith('-not');
  const base = negate ? op.slice(0, -4) : op;
  const values = node['values'] ?? [];
  // Both bounds null: everything (nothing when negated), present or not.
  const bothNull = (base === 'range-number' && nul(values['lowerNumber']) && nul(values['upperNumber']))
    || (base === 'range-date' && nul(values['lowerDate']) && nul(values['upperDate']))
    || (base === 'range-date-relative' && nul(values['lowerOffset']) && nul(values['upperOffset']));
  const p = bothNull ? true : positive(base, values, v, w);
  return negate ? !p : p;
}

function combine(join: unknown, results: boolean[]): boolean {
  return join === 'or' ? results.some(Boolean) : results.every(Boolean);
}

function eventNode(node: J, e: ModelEvent, c: ModelContact, w: World): boolean {
  if (node['type'] === 'group') return combine(node['join'], (node['children'] ?? []).map((k: J) => eventNode(k, e, c, w)));
  return condition(node, eventValue(e, c, node['key']), w);
}

export function matches(node: J, c: ModelContact, w: World, depth = 0, stack: string[] = []): boolean {
  switch (node['type']) {
    case 'group':
      return combine(node['join'], (node['children'] ?? []).map((k: J) => matches(k, c, w, depth, stack)));
    case 'attribute_condition':
      return condition(node, contactValue(c, node['key']), w);
    case 'group_event': {
      const ds: string[] = node['datasource'] ?? [];
      return w.eventsOf(c.userId).some((e) => e.project === c.project && e.type === node['event'] && (ds.length === 0 || ds.includes(e.datasourceId))
        && combine(node['join'], (node['children'] ?? []).map((k: J) => eventNode(k, e, c, w))));
    }
    case 'segment_condition': {
      const slug = node['key'] as string;
      if (stack.includes(slug)) throw new Error(`cycle ${slug}`);
      let p: boolean;
      if (slug === '_all') p = true;
      else {
        if (stack.length >= 4) throw new Error('too deep');
        const root = w.segments.get(slug);
        p = root === undefined ? false : matches(root as J, c, w, depth + 1, [...stack, slug]);
      }
      return node['operator'] === 'in-segment-not' ? !p : p;
    }
    default:
      throw new Error(`evaluator: unknown node ${String(node['type'])}`);
  }
}

/** The filter* restrictions of §2.3. */
export function restricted(body: J, c: ModelContact): boolean {
  if (body['filterAudienceIds'] && !body['filterAudienceIds'].includes(c.audienceId)) return false;
  if (body['filterNotAudienceIds']?.includes(c.audienceId)) return false;
  if (body['filterContactIds'] && !body['filterContactIds'].includes(c.userId)) return false;
  if (body['filterDatasourceIds'] && !c.datasourceIds.some((d) => body['filterDatasourceIds'].includes(d))) return false;
  if (body['filterUniversalSearch'] && !universalSearch(c).includes(String(body['filterUniversalSearch']).toLowerCase())) return false;
  const sampling = body['filterSamplingPercent'] ?? 100;
  if (sampling < 100 && !(crc32(c.userId) % 10000 < Math.round(sampling * 100))) return false;
  if (c.bucket < (body['filterBucketMin'] ?? 0) || c.bucket > (body['filterBucketMax'] ?? 199)) return false;
  if (body['filterBucketIn'] && !body['filterBucketIn'].includes(c.bucket)) return false;
  if (body['filterBucketNotIn']?.includes(c.bucket)) return false;
  return true;
}

/** The user ids of a search body's matches in a project, sorted. */
export function evaluate(body: J, contacts: readonly ModelContact[], project: string, w: World): string[] {
  return contacts
    .filter((c) => c.project === project && (body['root'] === undefined || matches(body['root'], c, w)) && restricted(body, c))
    .map((c) => c.userId)
    .sort();
}

export { instant };

/**
 * The order of §2.3 sortField/sortAsc as docs/grammar-b.md states it: texts byte-wise with an
 * absent text as '', numbers and dates with an absent value first, ties by _user_id, and the
 * direction applying to both.
 */
export function sortKey(c: ModelContact, field: string): string | number {
  switch (field) {
    case '_user_id': return c.userId;
    case '_audience_id': return c.audienceId;
    case '_first_name': return c.firstName ?? '';
    case '_last_name': return c.lastName ?? '';
    case '_email': return c.email ?? '';
    case '_phone_mobile': return c.phoneMobile ?? '';
    case '_country_code': return c.countryCode ?? '';
    case '_bucket': return c.bucket;
    case '_is_subscribed_sms': return c.isSubscribedSms === null ? -1 : Number(c.isSubscribedSms);
    case '_date_birthday': return c.dateBirthday === null ? -1e18 : Date.parse(`${c.dateBirthday}T00:00:00Z`);
    case '_date_imported': return c.dateImported === null ? -1e18 : Date.parse(c.dateImported);
    default: throw new Error(`evaluator: cannot sort by ${field}`);
  }
}

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

export function sorted(contacts: readonly ModelContact[], field: string, asc: boolean): string[] {
  const cmp = (a: ModelContact, b: ModelContact): number => {
    const [x, y] = [sortKey(a, field), sortKey(b, field)];
    const byKey = typeof x === 'string' && typeof y === 'string' ? Buffer.compare(bytes(x), bytes(y)) : Number(x) - Number(y);
    return byKey !== 0 ? byKey : Buffer.compare(bytes(a.userId), bytes(b.userId));
  };
  return [...contacts].sort((a, b) => (asc ? cmp(a, b) : cmp(b, a))).map((c) => c.userId);
}
