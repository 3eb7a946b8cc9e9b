// The filter tree as a ClickHouse boolean expression over one `audience` row (spec 3 §2.3,
// DESIGN §5): attribute conditions on its columns and maps, each group_event as a semi-join
// `user_id IN (SELECT user_id FROM events …)` scoped to the same project, and each segment
// compiled in place from its stored filter (depth cap 4, cycles refused).
import type { EventGroup, EventNode, Node, SegmentCondition } from './ast';
import { conditionSql, type Target } from './condition-sql';
import { ATTRIBUTE_MAPS, NATIVE_ATTRIBUTES, NATIVE_EVENT_ATTRIBUTES, PARAMETER_MAPS } from './fields';
import { MAX_BOUND_VALUES_BYTES, MAX_FILTER_SQL_CHARS, SEGMENT_MAX_DEPTH } from './limits';
import type { SqlContext } from './params';
import { invalid } from './problems';

/** Stored segments by slug, already parsed; the built-in `_all` is not in it. */
export type SegmentMap = ReadonlyMap<string, Node>;

export const ALL_SEGMENT = '_all';

interface Walk {
  readonly c: SqlContext;
  readonly segments: SegmentMap;
  /** Slugs being expanded, outermost first. */
  readonly stack: readonly string[];
}

const joined = (parts: readonly string[], join: 'and' | 'or'): string => {
  if (parts.length === 0) return join === 'and' ? '1' : '0';
  return parts.length === 1 ? parts[0] as string : `(${parts.join(join === 'and' ? ' AND ' : ' OR ')})`;
};

function attributeTarget(key: string, c: SqlContext): Target {
  const field = NATIVE_ATTRIBUTES[key];
  return field ? { kind: 'native', field } : { kind: 'custom', maps: ATTRIBUTE_MAPS, key: c.binder.bind('String', key) };
}

function eventTarget(key: string, c: SqlContext): Target {
  const field = NATIVE_EVENT_ATTRIBUTES[key];
  return field ? { kind: 'native', field } : { kind: 'custom', maps: PARAMETER_MAPS, key: c.binder.bind('String', key) };
}

function usesContact(n: EventNode): boolean {
  return n.kind === 'event' ? NATIVE_EVENT_ATTRIBUTES[n.key]?.needsContact === true : n.children.some(usesContact);
}

function eventNodeSql(n: EventNode, c: SqlContext): string {
  if (n.kind === 'event') return conditionSql(n, eventTarget(n.key, c), c);
  return joined(n.children.map((k) => eventNodeSql(k, c)), n.join);
}

function eventGroupSql(g: EventGroup, c: SqlContext): string {
  const where = [`e.project_id = ${c.project}`, `e.event_type = ${c.binder.bind('String', g.event)}`];
  if (g.datasources.length > 0) where.push(`e.datasource_id IN ${c.binder.bind('Array(String)', g.datasources)}`);
  const conditions = joined(g.children.map((k) => eventNodeSql(k, c)), g.join);
  if (conditions !== '1') where.push(conditions);
  // audience-ds-ids is a contact attribute: join the (current) contact row into the events.
  const from = g.children.some(usesContact)
    ? `${c.tables.events} AS e INNER JOIN (SELECT user_id, datasource_ids FROM ${c.tables.audience} FINAL WHERE project_id = ${c.project} AND deleted = 0) AS a ON a.user_id = e.user_id`
    : `${c.tables.events} AS e`;
  return `user_id IN (SELECT e.user_id FROM ${from} WHERE ${where.join(' AND ')})`;
}

function segmentSql(s: SegmentCondition, w: Walk): string {
  const positive = ((): string => {
    if (s.key === ALL_SEGMENT) return '1';
    const cycle = w.stack.indexOf(s.key);
    if (cycle >= 0) throw invalid(s.path, `segment cycle ${[...w.stack.slice(cycle), s.key].join(' → ')} (spec 3 §2.4 rule 3)`);
    if (w.stack.length >= SEGMENT_MAX_DEPTH) {
      throw invalid(s.path, `segments nest deeper than ${SEGMENT_MAX_DEPTH}: ${[...w.stack, s.key].join(' → ')} (spec 3 §8)`);
    }
    const root = w.segments.get(s.key);
    // A missing segment resolves to match-none (rule 3).
    if (root === undefined) return '0';
    return nodeSql(root, { ...w, stack: [...w.stack, s.key] });
  })();
  return s.negate ? `NOT (${positive})` : positive;
}

function nodeSql(n: Node, w: Walk): string {
  switch (n.kind) {
    case 'group': return joined(n.children.map((k) => nodeSql(k, w)), n.join);
    case 'attribute': return conditionSql(n, attributeTarget(n.key, w.c), w.c);
    case 'event-group': return eventGroupSql(n, w.c);
    case 'segment': return segmentSql(n, w);
  }
}

/**
 * The WHERE expression of a filter over `audience` (read FINAL, `deleted = 0`, and scoped to
 * the project by the caller).
 */
export function compileFilter(root: Node | null, c: SqlContext, segments: SegmentMap = new Map()): string {
  return root === null ? '1' : nodeSql(root, { c, segments, stack: [] });
}

/** Every segment slug a tree refers to directly (for loading them before compiling). */
export function segmentRefs(root: Node | null): string[] {
  const out: string[] = [];
  const walk = (n: Node): void => {
    if (n.kind === 'segment') out.push(n.key);
    else if (n.kind === 'group') n.children.forEach(walk);
  };
  if (root !== null) walk(root);
  return out;
}

/** A bound value as ClickHouse's HTTP interface receives it (`param_<name>=<text>` in the URL). */
function encodedSize(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  return encodeURIComponent(text).length;
}

/**
 * Refuses (400 naming the limit) a compiled filter whose text or bound values ClickHouse would
 * refuse: the text against max_query_size, the values against a server's URL limit
 * (core/filters/grammar-b/limits.ts).
 */
export function checkCompiledSize(where: string, params: Readonly<Record<string, unknown>>): void {
  if (where.length > MAX_FILTER_SQL_CHARS) {
    throw invalid('root', `the filter compiles to ${where.length.toLocaleString('en')} characters of SQL (its nodes and the segments it uses); at most ${MAX_FILTER_SQL_CHARS.toLocaleString('en')}, below ClickHouse's max_query_size: use fewer nodes or segments`);
  }
  const bytes = Object.values(params).reduce<number>((sum, v) => sum + encodedSize(v), 0);
  if (bytes > MAX_BOUND_VALUES_BYTES) {
    throw invalid('root', `the filter's values take ${bytes.toLocaleString('en')} bytes URL-encoded; at most ${MAX_BOUND_VALUES_BYTES.toLocaleString('en')} (ClickHouse receives them as query parameters): use fewer or shorter values`);
  }
}
