// Aggregations of spec 3 §4.2: terms (size, other bucket and its label), range, and nested on
// events with inner terms/range aggregations. Fields are `@<attribute>` on contacts, and
// event attributes (native or parameter, `@` optional) inside nested. Each aggregation
// compiles to one SQL statement over the filtered contacts (or their events). Sub-aggregations
// are supported under `nested` only (docs/grammar-b.md).
import { ATTRIBUTE_MAPS, NATIVE_ATTRIBUTES, NATIVE_EVENT_ATTRIBUTES, PARAMETER_MAPS, type CustomMaps, type NativeField } from './fields';
import { CUSTOM_NAME } from './limits';
import type { SqlContext } from './params';
import { child, invalid, item, quote } from './problems';

interface Range { readonly from: number | string | null; readonly to: number | string | null; readonly key: string }

export type Aggregation =
  | { readonly name: string; readonly kind: 'terms'; readonly field: string; readonly size: number; readonly otherBucket: boolean; readonly otherLabel: string }
  | { readonly name: string; readonly kind: 'range'; readonly field: string; readonly ranges: readonly Range[] }
  | { readonly name: string; readonly kind: 'nested'; readonly path: 'events'; readonly aggs: readonly Aggregation[] };

type Json = Record<string, unknown>;

function fieldOf(params: Json, path: string, events: boolean): string {
  const raw = params['field'];
  if (typeof raw !== 'string') throw invalid(child(path, 'field'), 'is required, e.g. "@_client_tags"');
  if (!events && !raw.startsWith('@')) throw invalid(child(path, 'field'), `references an attribute with "@", e.g. "@${raw}"`);
  const name = raw.startsWith('@') ? raw.slice(1) : raw;
  const natives = events ? NATIVE_EVENT_ATTRIBUTES : NATIVE_ATTRIBUTES;
  if (!(name in natives) && !CUSTOM_NAME.test(name)) throw invalid(child(path, 'field'), `${quote(raw)} is not an attribute`);
  if (!events && name === '_geopoint') throw invalid(child(path, 'field'), 'geopoints cannot be aggregated');
  return name;
}

function bound(v: unknown, path: string): number | string | null {
  if (v === undefined || v === null) return null;
  if ((typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v))) return v;
  throw invalid(path, 'must be a number, an ISO date, or null');
}

function parseOne(name: string, raw: Json, path: string, events: boolean): Aggregation {
  const params = (raw['params'] ?? {}) as Json;
  const ppath = child(path, 'params');
  if (raw['aggs'] !== undefined && raw['type'] !== 'nested') throw invalid(child(path, 'aggs'), 'sub-aggregations are supported under nested only');
  if (raw['type'] === 'terms') {
    const size = params['size'] ?? 10;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > 1000) throw invalid(child(ppath, 'size'), 'must be an integer from 1 to 1000 (default 10)');
    const label = params['other_bucket_label'] ?? 'other';
    if (typeof label !== 'string') throw invalid(child(ppath, 'other_bucket_label'), 'must be a string');
    return { name, kind: 'terms', field: fieldOf(params, ppath, events), size, otherBucket: params['other_bucket'] === true, otherLabel: label };
  }
  if (raw['type'] === 'range') {
    const ranges = params['ranges'];
    if (!Array.isArray(ranges) || ranges.length === 0 || ranges.length > 100) throw invalid(child(ppath, 'ranges'), 'must be 1 to 100 objects { from, to }');
    return {
      name, kind: 'range', field: fieldOf(params, ppath, events),
      ranges: ranges.map((r: Json, i) => {
        const at = item(child(ppath, 'ranges'), i);
        const from = bound(r?.['from'], child(at, 'from'));
        const to = bound(r?.['to'], child(at, 'to'));
        return { from, to, key: `${from ?? '*'}-${to ?? '*'}` };
      }),
    };
  }
  if (events) throw invalid(child(path, 'type'), 'nested aggregations do not nest');
  if (params['path'] !== 'events') throw invalid(child(ppath, 'path'), 'must be "events"');
  const inner = parseMap(raw['aggs'], child(path, 'aggs'), true);
  if (inner.length === 0) throw invalid(child(path, 'aggs'), 'a nested aggregation needs inner aggs');
  return { name, kind: 'nested', path: 'events', aggs: inner };
}

function parseMap(raw: unknown, path: string, events: boolean): Aggregation[] {
  if (raw === undefined) return [];
  return Object.entries(raw as Record<string, Json>).map(([name, agg]) => {
    // Results are keyed by name: `__proto__` would set the result's prototype instead (the schema refuses it too).
    if (name === '__proto__') throw invalid(`${path}.${name}`, 'is not a usable aggregation name');
    return parseOne(name, agg, `${path}.${name}`, events);
  });
}

export function parseAggregations(raw: unknown): Aggregation[] {
  return parseMap(raw, 'aggregations', false);
}

/** The distinct values of a field as Array(String), one row per value with arrayJoin; absent = []. */
export function termValues(name: string, events: boolean, c: SqlContext): string {
  const native: NativeField | undefined = (events ? NATIVE_EVENT_ATTRIBUTES : NATIVE_ATTRIBUTES)[name];
  if (native) {
    if (native.type === 'strings') return native.distinct ?? `arrayDistinct(${native.sql})`;
    const text = native.type === 'date' ? `formatDateTime(${native.sql}, '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')` : `toString(${native.sql})`;
    return native.nullable ? `if(isNull(${native.sql}), [], [${text}])` : `[${text}]`;
  }
  const m: CustomMaps = events ? PARAMETER_MAPS : ATTRIBUTE_MAPS;
  const k = c.binder.bind('String', name);
  return `multiIf(notEmpty(${m.array}[${k}]), arrayDistinct(${m.array}[${k}]), mapContains(${m.string}, ${k}), [${m.string}[${k}]],
    mapContains(${m.number}, ${k}), [toString(${m.number}[${k}])], mapContains(${m.bool}, ${k}), [toString(${m.bool}[${k}])],
    mapContains(${m.date}, ${k}), [formatDateTime(${m.date}[${k}], '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC')], CAST([], 'Array(String)'))`;
}

/** A numeric view of a field for range aggregations (dates as epoch ms); NULL when absent. */
export function rangeValue(name: string, events: boolean, c: SqlContext): { sql: string; date: boolean } {
  const native = (events ? NATIVE_EVENT_ATTRIBUTES : NATIVE_ATTRIBUTES)[name];
  if (native) {
    if (native.type === 'number') return { sql: `toFloat64(${native.sql})`, date: false };
    if (native.type === 'date') return { sql: `toFloat64(toUnixTimestamp64Milli(${native.sql}))`, date: true };
    if (native.type === 'birthday') return { sql: `toFloat64(toUnixTimestamp64Milli(toDateTime64(${native.sql}, 3, ${c.tz})))`, date: true };
    throw invalid(`aggregations (${name})`, 'range aggregations need a number or date attribute');
  }
  const m = events ? PARAMETER_MAPS : ATTRIBUTE_MAPS;
  const k = c.binder.bind('String', name);
  return {
    sql: `multiIf(mapContains(${m.number}, ${k}), ${m.number}[${k}], mapContains(${m.date}, ${k}), toFloat64(toUnixTimestamp64Milli(${m.date}[${k}])), NULL)`,
    date: false,
  };
}

/** A range bound as a Float64 expression: numbers bound, ISO dates parsed in the project timezone. */
export function rangeBound(v: number | string, c: SqlContext): string {
  return typeof v === 'number' ? c.binder.bind('Float64', v) : `toFloat64(toUnixTimestamp64Milli(parseDateTime64BestEffort(${c.binder.bind('String', v)}, 3, ${c.tz})))`;
}
