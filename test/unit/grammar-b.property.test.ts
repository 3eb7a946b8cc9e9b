// Spec 3 §2.3, §2.4 + DESIGN §5, without an engine: every generated filter (every operator and
// values shape, test/support/grammar-b-arbitraries.ts) parses, compiles, and its SQL text holds
// no string literal but the compiler's own: client values and names only as placeholders.
import fc from 'fast-check';
import { compileFilter, ParamBinder, parseSearch, sqlContext, type SearchRequest } from '../../core/filters/grammar-b';
import { filterArb, restrictionsArb, worldArb, type World } from '../support/grammar-b-arbitraries';

const TABLES = { audience: '`d`.`audience`', events: '`d`.`events`' };
const OWN_LITERALS = [`'Array(String)'`, `'UTC'`, TABLES.audience, TABLES.events];

describe('spec 3 §2.4: generated filters parse and compile to placeholder-only SQL', () => {
  const [world] = fc.sample(worldArb('unit', 20, 10), { seed: 3, numRuns: 1 }) as [World];
  test('1,000 generated filters', () => {
    fc.assert(fc.property(filterArb(world), fc.option(restrictionsArb(world)), (root, r) => {
      const body = JSON.parse(JSON.stringify({ version: '0.0.1', root, ...(r ?? {}) })) as Record<string, unknown>;
      const request = parseSearch(body) as Extract<SearchRequest, { kind: 'query' }>;
      const binder = new ParamBinder();
      const sql = compileFilter(request.query.root, sqlContext(binder, TABLES, 'p', world.tz, new Date(world.now)));
      const stripped = OWN_LITERALS.reduce((text, lit) => text.split(lit).join(''), sql.replace(/\{b\d+:[A-Za-z0-9(), ']+\}/g, '?'));
      expect(stripped).not.toMatch(/['"`]/);
      for (const placeholder of sql.match(/\{b\d+:/g) ?? []) expect(binder.params).toHaveProperty(placeholder.slice(1, -1));
    }), { seed: 4, numRuns: 1000 });
  });
});
