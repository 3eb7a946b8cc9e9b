// Spec 3 §2.3, §2.4: the compiled SQL (through the product's search path on a test-owned chdb
// with the migrations applied) and the reference evaluator (test/support/grammar-b-evaluator.ts)
// return the same contacts on generated audiences, events and filters — every operator, values
// shape, native and custom key, event attribute, segment and restriction field, in five
// timezones. GRAMMAR_B_RUNS sets the number of filters per world (default 250, 4 worlds).
import fc from 'fast-check';
import { parseSearch, SORT_FIELDS, type SegmentSource } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AudienceSearch } from '../../stores/audience-search';
import { insertModel } from '../support/audience-model';
import { CITIES, DISTANCES_KM, filterArb, restrictionsArb, worldArb, type World } from '../support/grammar-b-arbitraries';
import { evaluate, sorted, type World as EvalWorld } from '../support/grammar-b-evaluator';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

const WORLDS = 4;
const RUNS = Number(process.env['GRAMMAR_B_RUNS'] ?? 250);
const SEED = Number(process.env['GRAMMAR_B_SEED'] ?? 20261123);

const OPERATORS = [
  'match-all', 'match-none', 'exists', 'exists-not', 'matches-bool', 'contains', 'contains-not', 'startswith', 'startswith-not', 'endswith', 'endswith-not',
  'matches-string', 'matches-string-not', 'matches-number', 'matches-number-not', 'range-number', 'range-number-not', 'matches-date', 'range-date',
  'range-date-not', 'range-date-relative', 'range-date-relative-not', 'range-date-anniversary', 'range-date-dayversary', 'range-date-timeversary',
  'geopoint-distance', 'in-segment', 'in-segment-not',
];
const seen = new Map<string, number>();
let cases = 0;
let informative = 0;

function record(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  const n = node as Record<string, unknown>;
  if (typeof n['operator'] === 'string') seen.set(n['operator'], (seen.get(n['operator']) ?? 0) + 1);
  if (Array.isArray(n['children'])) n['children'].forEach(record);
}

let engine: EmbeddedClickHouse | undefined;
let ch: ClickHouse;
const segments = new Map<string, Map<string, unknown>>();
const source: SegmentSource = { getRoot: async (project, slug) => segments.get(project)?.get(slug) ?? null };

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('grammar_b_prop');
  ch = engine.ch;
}, 60_000);

afterAll(() => engine?.close());

test('generated cities are never within 1% of a generated distance (ClickHouse approximates the sphere)', () => {
  const r = (x: number): number => (x * Math.PI) / 180;
  for (const a of CITIES) {
    for (const b of CITIES) {
      const h = Math.sin(r(b.lat - a.lat) / 2) ** 2 + Math.cos(r(a.lat)) * Math.cos(r(b.lat)) * Math.sin(r(b.lon - a.lon) / 2) ** 2;
      const km = 2 * 6372.797560856 * Math.asin(Math.sqrt(h));
      for (const d of DISTANCES_KM) if (km > 0) expect(Math.abs(km - d) / km).toBeGreaterThan(0.01);
    }
  }
});

describe('spec 3 §2.4: compiled SQL and the reference evaluator agree on generated cases', () => {
  const worlds = fc.sample(fc.tuple(...Array.from({ length: WORLDS }, (_, i) => worldArb(`w${i}`))), { seed: SEED, numRuns: 1 })[0] as World[];

  test.each(worlds.map((w) => [w.project, w.tz, new Date(w.now).toISOString(), w] as const))('world %s in %s at %s', async (_p, _tz, _now, w) => {
    await insertModel(ch, w.contacts, w.events);
    const [s1, s2] = fc.sample(filterArb(w, false), { seed: SEED + 1, numRuns: 2 }) as [Record<string, unknown>, Record<string, unknown>];
    const stored = new Map<string, unknown>([['s1', s1], ['s2', { type: 'group', join: 'or', children: [{ type: 'segment_condition', key: 's1', operator: 'in-segment-not' }, s2] }]]);
    segments.set(w.project, stored);
    const search = new AudienceSearch(ch, source, Buffer.alloc(32, 1));
    const evalWorld: EvalWorld = { tz: w.tz, now: w.now, segments: stored, eventsOf: (u) => w.events.filter((e) => e.userId === u) };
    const body = fc.tuple(filterArb(w), fc.option(restrictionsArb(w), { freq: 2 })).map(([root, r]) => JSON.parse(JSON.stringify({ version: '0.0.1', limit: 1000, root, ...(r ?? {}) })) as Record<string, unknown>);
    await fc.assert(fc.asyncProperty(body, async (b) => {
      const result = await search.search(parseSearch(b), { project: w.project, timezone: w.tz, now: new Date(w.now) });
      const got = result.entities.map((e) => String(e['_user_id'])).sort();
      const expected = evaluate(b, w.contacts, w.project, evalWorld);
      expect(got).toEqual(expected);
      expect(result.total).toBe(expected.length);
      record(b['root']);
      cases += 1;
      if (expected.length > 0 && expected.length < w.contacts.length) informative += 1;
    }), { seed: SEED + Number(w.project.slice(1)), numRuns: RUNS, endOnFailure: true });
  }, 600_000);
});

test('every operator of §2.4 was generated, and most cases split the audience', () => {
  const missing = OPERATORS.filter((op) => !seen.has(op));
  expect(missing).toEqual([]);
  expect(informative / cases).toBeGreaterThan(0.3);
  process.stdout.write(`grammar-b property: ${cases} cases, ${informative} with some but not all contacts\n`);
});

describe('spec 3 §2.3, §3: cursor pages in every sort order equal the evaluator\'s order', () => {
  test('random sort field, direction, page size and filter: every contact once, in order', async () => {
    const [w] = fc.sample(worldArb('sorted', 80, 20), { seed: SEED + 7, numRuns: 1 }) as [World];
    await insertModel(ch, w.contacts, w.events);
    const search = new AudienceSearch(ch, source, Buffer.alloc(32, 2));
    const evalWorld: EvalWorld = { tz: w.tz, now: w.now, segments: new Map(), eventsOf: (u) => w.events.filter((e) => e.userId === u) };
    const scope = { project: w.project, timezone: w.tz, now: new Date(w.now) };
    const arb = fc.record({ field: fc.constantFrom(...Object.keys(SORT_FIELDS)), asc: fc.boolean(), limit: fc.integer({ min: 1, max: 25 }), root: fc.option(filterArb(w, false), { freq: 3 }) });
    await fc.assert(fc.asyncProperty(arb, async ({ field, asc, limit, root }) => {
      const body = JSON.parse(JSON.stringify({ version: '0.0.1', limit, sortField: field, sortAsc: asc, ...(root === null ? {} : { root }) })) as Record<string, unknown>;
      const matching = new Set(evaluate(body, w.contacts, w.project, evalWorld));
      const expected = sorted(w.contacts.filter((c) => matching.has(c.userId)), field, asc);
      const got: string[] = [];
      let result = await search.search(parseSearch(body), scope);
      got.push(...result.entities.map((e) => String(e['_user_id'])));
      while (result.cursor !== null && got.length <= w.contacts.length) {
        result = await search.search(parseSearch({ cursor: result.cursor }), scope);
        got.push(...result.entities.map((e) => String(e['_user_id'])));
      }
      expect(got).toEqual(expected);
    }), { seed: SEED + 8, numRuns: Math.max(20, Math.round(RUNS / 5)), endOnFailure: true });
  }, 600_000);
});

