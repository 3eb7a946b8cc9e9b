// The audience filter object (spec 3 §2.3) of a search: ajv checks the shape against
// schemas/audience.ts, then the tree, sort, restrictions and aggregations are parsed. A request
// carrying a cursor may carry only the cursor (and a new `limit`); the rest comes from it.
import Ajv, { type ErrorObject } from 'ajv';
import { aggregationSchema, audienceNodeSchema, audienceSearchSchema, segmentCreateSchema } from '../../../schemas/audience';
import { parseAggregations, type Aggregation } from './aggregations';
import type { Node } from './ast';
import { DEFAULT_LIMIT } from './limits';
import { parseNode } from './parse-node';
import { invalid } from './problems';
import { parseRestrictions, type Restrictions } from './restrictions';
import { parseSort, type SortKey } from './sort';

export interface AudienceQuery {
  readonly root: Node | null;
  readonly limit: number;
  readonly offset: number;
  readonly sort: SortKey;
  readonly includeAllData: boolean;
  readonly restrictions: Restrictions;
  readonly aggregations: readonly Aggregation[];
  /** The request without paging and aggregations: what a cursor carries to continue it. */
  readonly continuation: Record<string, unknown>;
}

export type SearchRequest =
  | { readonly kind: 'query'; readonly query: AudienceQuery }
  | { readonly kind: 'cursor'; readonly cursor: string; readonly limit: number | null };

const ajv = new Ajv({ allErrors: false, strict: false });
ajv.addSchema([audienceNodeSchema, aggregationSchema]);
const checkSearch = ajv.compile(audienceSearchSchema);
const checkSegment = ajv.compile(segmentCreateSchema);

/** `/root/children/2/values` → `root.children[2].values`. */
export function nodePath(instancePath: string, base: string): string {
  return instancePath.split('/').slice(1).reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : `${path ? `${path}.` : ''}${part}`), base);
}

function shapeError(error: ErrorObject | undefined, base: string): never {
  if (!error) throw invalid(base, 'is not a valid audience filter object');
  const path = nodePath(error.instancePath, base);
  const params = error.params as Record<string, unknown>;
  // A name refused by propertyNames: a node field its type does not take, an aggregation named __proto__.
  if (error.propertyName !== undefined) {
    const at = `${path || base}.${error.propertyName}`;
    if (error.keyword === 'enum') throw invalid(at, `this node type takes only ${(params['allowedValues'] as unknown[]).map(String).join(', ')} (spec 3 §2.3)`);
    throw invalid(at, 'is not a usable name');
  }
  if (error.keyword === 'required' && params['missingProperty'] === 'version' && path === '') throw invalid('version', 'is required: "0.0.1" (spec 3 §9)');
  if (error.keyword === 'additionalProperties') throw invalid(path || base, `unknown field "${String(params['additionalProperty'])}" (spec 3 §2.3)`);
  if (error.keyword === 'const') throw invalid(path, `must be "${String(params['allowedValue'])}" (spec 3 §9)`);
  if (error.keyword === 'enum') throw invalid(path, `must be one of ${(params['allowedValues'] as unknown[]).map(String).join(', ')}`);
  throw invalid(path || base, `${error.message ?? 'is invalid'} (spec 3 §2.3)`);
}

const CONTINUED = ['version', 'root', 'sortField', 'sortAsc', 'includeAllData', 'filterAudienceIds', 'filterNotAudienceIds', 'filterContactIds',
  'filterDatasourceIds', 'filterUniversalSearch', 'filterSamplingPercent', 'filterBucketMin', 'filterBucketMax', 'filterBucketIn', 'filterBucketNotIn'];

/** A full query (no cursor): from a request body, or from the continuation a cursor carried. */
export function parseQuery(body: Record<string, unknown>, limitOverride: number | null = null): AudienceQuery {
  if (body['version'] === undefined) throw invalid('version', 'is required: "0.0.1" (spec 3 §9)');
  const aggregations = parseAggregations(body['aggregations']);
  const limit = limitOverride ?? (typeof body['limit'] === 'number' ? body['limit'] : DEFAULT_LIMIT);
  if (limit === 0 && aggregations.length === 0) throw invalid('limit', '0 is allowed only with aggregations (spec 3 §2.3)');
  return {
    root: body['root'] === undefined ? null : parseNode(body['root']),
    limit,
    offset: typeof body['offset'] === 'number' ? body['offset'] : 0,
    sort: parseSort(body['sortField'], body['sortAsc']),
    includeAllData: body['includeAllData'] !== false,
    restrictions: parseRestrictions(body),
    aggregations,
    continuation: Object.fromEntries(CONTINUED.filter((k) => body[k] !== undefined).map((k) => [k, body[k]])),
  };
}

export function parseSearch(input: unknown): SearchRequest {
  if (!checkSearch(input)) shapeError(checkSearch.errors?.[0], '');
  const body = input as Record<string, unknown>;
  if (typeof body['cursor'] === 'string') {
    // §3: a cursor clears offset; the filter, sort and restrictions are the cursor's.
    return { kind: 'cursor', cursor: body['cursor'], limit: typeof body['limit'] === 'number' ? body['limit'] : null };
  }
  return { kind: 'query', query: parseQuery(body) };
}

export interface SegmentInput {
  readonly slug: string;
  readonly name: string;
  readonly root: Node;
  readonly rawRoot: unknown;
}

/** The body of a segment create (schemas/audience.ts segmentCreateSchema). */
export function parseSegment(input: unknown): SegmentInput {
  if (!checkSegment(input)) shapeError(checkSegment.errors?.[0], '');
  const body = input as { slug: string; name?: string; root: unknown };
  return { slug: body.slug, name: body.name ?? body.slug, root: parseNode(body.root), rawRoot: body.root };
}
