// Grammar B (spec 3 §2.3, §2.4, §3, §4.2, §7, §8): the audience filter.
//   const request = parseSearch(body);                       // 400 INVALID_FILTER naming the node path
//   const c = sqlContext(new ParamBinder(), tables, project, timezone, now);
//   const where = compileFilter(query.root, c, segments);    // bound parameters only
// The search itself (paging, cursors, aggregations) runs in stores/audience-search.ts.
// See docs/grammar-b.md.
export type { Aggregation } from './aggregations';
export { rangeBound, rangeValue, termValues } from './aggregations';
export type { AttributeCondition, EventGroup, Node, Values } from './ast';
export { ALL_SEGMENT, checkCompiledSize, compileFilter, segmentRefs } from './compile';
export type { SegmentMap } from './compile';
export { openCursor, signCursor } from './cursor';
export { MATERIALIZED_ATTRIBUTE_COLUMNS } from './fields';
export type { CursorState } from './cursor';
export {
  CURSOR_TTL_MS, DEFAULT_LIMIT, FILTER_VERSION, MAX_BOUND_VALUES_BYTES, MAX_FILTER_SQL_CHARS, MAX_LIMIT, QUERY_MAX_EXECUTION_SECONDS, QUERY_MAX_MEMORY_BYTES, QUERY_MAX_ROWS_TO_READ,
  SEARCHES_IN_FLIGHT_PER_ORG, SEGMENT_MAX_DEPTH,
} from './limits';
export { ParamBinder } from '../params';
export { sqlContext } from './params';
export type { SqlContext, Tables } from './params';
export { parseNode } from './parse-node';
export { parseQuery, parseSearch, parseSegment } from './parse-search';
export type { AudienceQuery, SearchRequest, SegmentInput } from './parse-search';
export { restrictionsSql } from './restrictions';
export type { Restrictions } from './restrictions';
export { SORT_FIELDS } from './sort';
export type { SortKey } from './sort';
export { loadSegments, saveSegment } from './segments';
export type { SegmentSource, SegmentWriter } from './segments';
