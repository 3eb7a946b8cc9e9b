// Spec 3 §2.4 rule 3 (segments: depth cap 4, cycles, missing, `_all`) and §3 (stateless,
// signed, expiring cursors), without an engine.
import { errorOf } from '../support/app-error';
import {
  ALL_SEGMENT, compileFilter, loadSegments, openCursor, ParamBinder, parseNode, signCursor, sqlContext, type SegmentSource,
} from '../../core/filters/grammar-b';

const tables = { audience: 'audience', events: 'events' };
const ctx = () => sqlContext(new ParamBinder(), tables, 'p1', 'UTC', new Date('2026-01-01T00:00:00Z'));
const ref = (key: string, operator = 'in-segment'): Record<string, unknown> => ({ type: 'segment_condition', key, operator });


async function compiled(stored: Record<string, unknown>, root: unknown): Promise<string> {
  const source: SegmentSource = { getRoot: async (_p, slug) => stored[slug] ?? null };
  const node = parseNode(root);
  return compileFilter(node, ctx(), await loadSegments(node, 'p1', source));
}

describe('spec 3 §2.4 rule 3: segments', () => {
  const leaf = { type: 'attribute_condition', key: '_email', operator: 'exists', values: [] };
  const chain = (n: number): Record<string, unknown> =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`s${i + 1}`, i + 1 === n ? leaf : ref(`s${i + 2}`)]));

  test('4 levels compile to the innermost filter', async () => {
    expect(await compiled(chain(4), ref('s1'))).toBe('(isNotNull(email))');
  });
  test('5 levels are a 400 naming the chain', async () => {
    const source: SegmentSource = { getRoot: async (_p, slug) => chain(5)[slug] ?? null };
    const node = parseNode(ref('s1'));
    const segments = await loadSegments(node, 'p1', source);
    const err = errorOf(() => compileFilter(node, ctx(), segments));
    expect(err.status).toBe(400);
    expect(err.message).toBe('segment s4: segments nest deeper than 4: s1 → s2 → s3 → s4 → s5 (spec 3 §8)');
  });
  test('a cycle is a 400 naming it, however it is entered', async () => {
    const stored = { a: { type: 'group', join: 'or', children: [ref('b')] }, b: ref('c', 'in-segment-not'), c: ref('a') };
    const source: SegmentSource = { getRoot: async (_p, slug) => (stored as Record<string, unknown>)[slug] ?? null };
    const node = parseNode(ref('b'));
    const segments = await loadSegments(node, 'p1', source);
    const err = errorOf(() => compileFilter(node, ctx(), segments));
    expect(err.message).toContain('segment cycle b → c → a → b');
  });
  test('a segment used twice side by side is not a cycle', async () => {
    expect(await compiled({ x: leaf }, { type: 'group', children: [ref('x'), ref('x', 'in-segment-not')] })).toBe('((isNotNull(email)) AND NOT ((isNotNull(email))))');
  });
  test('missing → match-none, _all → match-all, both negatable', async () => {
    expect(await compiled({}, ref('nope'))).toBe('0');
    expect(await compiled({}, ref('nope', 'in-segment-not'))).toBe('NOT (0)');
    expect(await compiled({}, ref(ALL_SEGMENT))).toBe('1');
    expect(await compiled({}, ref(ALL_SEGMENT, 'in-segment-not'))).toBe('NOT (1)');
  });
});

describe('spec 3 §3: cursors', () => {
  const key = Buffer.alloc(32, 9);
  const state = { project: 'p1', continuation: { version: '0.0.1', sortField: '_email' }, after: ['x@y', 'u1'] as [string, string], limit: 10, total: 123 };
  const now = 1_800_000_000_000;

  test('round trip, stateless: any holder of the key opens it', () => {
    const cursor = signCursor(key, state, now);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(openCursor(Buffer.alloc(32, 9), cursor, 'p1', now + 1000)).toEqual(state);
  });
  test('valid until 5 minutes after issue, expired one millisecond later', () => {
    const cursor = signCursor(key, state, now);
    expect(openCursor(key, cursor, 'p1', now + 300_000).limit).toBe(10);
    expect(errorOf(() => openCursor(key, cursor, 'p1', now + 300_001)).message).toContain('expired');
  });
  test('tampered payload, tampered signature, another key, another project, garbage → 400', () => {
    const cursor = signCursor(key, state, now);
    const [body, sig] = cursor.split('.') as [string, string];
    const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, 'base64url').toString()), l: 1000 })).toString('base64url');
    for (const [bad, k, project] of [
      [`${altered}.${sig}`, key, 'p1'], [`${body}.${sig.slice(0, -2)}AA`, key, 'p1'], [cursor, Buffer.alloc(32, 8), 'p1'], [cursor, key, 'p2'],
      ['', key, 'p1'], ['a.b.c', key, 'p1'], ['%%%.***', key, 'p1'],
    ] as const) {
      const err = errorOf(() => openCursor(k, bad, project, now));
      expect(err.status).toBe(400);
      expect(err.message.startsWith('cursor: ')).toBe(true);
    }
  });
});
