// Spec 3 §1: "two equivalent formats". Random valid queries over the SMS catalogue,
// rendered to the URL form and to the JSON form, parse back to queries that compile to
// identical SQL, params, ORDER BY, LIMIT and OFFSET. Plus: the WHERE text is built only
// from catalogue columns, our function names and placeholders (DESIGN §5).
import fc from 'fast-check';
import {
  compile, OPERATORS_BY_TYPE, parseUrl, SMS_FIELDS, toJson, toUrlParams,
  type Condition, type FieldDef, type Node, type Operator, type Paging, type Query, type SortKey,
} from '../../core/filters/grammar-a';

const now = new Date('2026-11-22T12:00:00.000Z');

const LIST_OPS: readonly Operator[] = ['in', 'ini', 'nin', 'nini'];
const PAIR_OPS: readonly Operator[] = ['range', 'between', 'betweeneq'];
const TEXT_OPS: readonly Operator[] = ['contains', 'containsi', 'ncontains', 'ncontainsi', 'starts', 'startsi', 'ends', 'endsi'];

const anyText = fc.string({ unit: 'grapheme', maxLength: 12 });
const pipeless = anyText.filter((s) => !s.includes('|'));
const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

const dateText: fc.Arbitrary<string> = fc.oneof(
  // ISO 8601 with offset (Z or ±hh:mm)
  fc
    .record({
      y: fc.integer({ min: 1950, max: 2250 }), mo: fc.integer({ min: 1, max: 12 }), d: fc.integer({ min: 1, max: 28 }),
      h: fc.integer({ min: 0, max: 23 }), mi: fc.integer({ min: 0, max: 59 }), s: fc.integer({ min: 0, max: 59 }),
      frac: fc.option(fc.integer({ min: 0, max: 999_999 }), { nil: undefined }), off: fc.integer({ min: -14 * 60, max: 14 * 60 }),
      z: fc.boolean(),
    })
    .map(({ y, mo, d, h, mi, s, frac, off, z }) => {
      const base = `${pad(y, 4)}-${pad(mo)}-${pad(d)}T${pad(h)}:${pad(mi)}:${pad(s)}${frac === undefined ? '' : `.${pad(frac, 6)}`}`;
      return z ? `${base}Z` : `${base}${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
    }),
  // microsecond UTC without offset, T or space
  fc
    .tuple(fc.date({ min: new Date('1950-01-01T00:00:00Z'), max: new Date('2250-01-01T00:00:00Z'), noInvalidDate: true }), fc.integer({ min: 0, max: 999 }), fc.boolean())
    .map(([d, micro, space]) => `${d.toISOString().slice(0, 10)}${space ? ' ' : 'T'}${d.toISOString().slice(11, 23)}${pad(micro, 3)}`),
  // relative
  fc
    .tuple(fc.integer({ min: 0, max: 100 }), fc.constantFrom('second', 'minute', 'hour', 'day', 'month', 'year'), fc.boolean())
    .map(([n, unit, plural]) => `${n} ${unit}${plural ? 's' : ''} ago`),
);

const number = fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.double({ noNaN: true, noDefaultInfinity: true })).map((n) => (n === 0 ? 0 : n));

/** A valid scalar for the field type; `split` when the URL form would split it on pipes. */
function scalar(def: FieldDef, split: boolean): fc.Arbitrary<unknown> {
  switch (def.type) {
    case 'string':
    case 'id':
      return split ? pipeless : anyText;
    case 'number':
      return number;
    case 'date':
      return dateText;
    case 'boolean':
      return fc.boolean();
  }
}

function valueFor(def: FieldDef, op: Operator): fc.Arbitrary<unknown> {
  if (op === 'exists') return fc.boolean();
  if (LIST_OPS.includes(op)) return fc.array(scalar(def, true), { minLength: 1, maxLength: 4 });
  if (PAIR_OPS.includes(op)) return fc.tuple(scalar(def, true), scalar(def, true));
  if (TEXT_OPS.includes(op)) return fc.oneof(pipeless, fc.array(pipeless, { minLength: 1, maxLength: 4 }));
  return scalar(def, false);
}

const fieldAndOp = fc
  .constantFrom(...SMS_FIELDS)
  .chain((def) => fc.constantFrom(...OPERATORS_BY_TYPE[def.type]).map((op) => [def, op] as const));

const condition: fc.Arbitrary<Condition> = fieldAndOp.chain(([def, op]) =>
  valueFor(def, op).map((value): Condition => ({ kind: 'cond', field: def.name, operator: op, value })),
);

/** Several conditions on one field_operator key: the URL form's OR. */
const sameKeyOr: fc.Arbitrary<Node> = fieldAndOp.chain(([def, op]) =>
  fc
    .array(valueFor(def, op), { minLength: 2, maxLength: 3 })
    .map((values): Node => ({ kind: 'or', children: values.map((value): Condition => ({ kind: 'cond', field: def.name, operator: op, value })) })),
);

const keyOf = (node: Node): string => {
  const first = node.kind === 'cond' ? node : node.children[0];
  return first !== undefined && first.kind === 'cond' ? `${first.field}_${first.operator}` : '';
};

const sort: fc.Arbitrary<SortKey[]> = fc.uniqueArray(
  fc.record({ field: fc.constantFrom(...SMS_FIELDS.map((f) => f.name)), direction: fc.constantFrom('asc' as const, 'desc' as const) }),
  { maxLength: 4, selector: (k) => k.field },
);
const paging: fc.Arbitrary<Paging | undefined> = fc.option(
  fc.record({ start: fc.integer({ min: 0, max: 100_000 }), limit: fc.integer({ min: 1, max: 1000 }) }),
  { nil: undefined },
);
const group: fc.Arbitrary<string | undefined> = fc.option(
  fc.constantFrom('hourly', 'daily', 'monthly', ...SMS_FIELDS.map((f) => f.name)),
  { nil: undefined },
);

function query(children: fc.Arbitrary<Node[]>): fc.Arbitrary<Query> {
  return fc.record({ children, sort, paging, group }).map(({ children: c, sort: s, paging: p, group: g }) => ({
    filter: { kind: 'and' as const, children: c },
    sort: s,
    ...(p === undefined ? {} : { paging: p }),
    ...(g === undefined ? {} : { group: g }),
  }));
}

/** What the URL form can say: an AND of conditions and same-key OR groups, keys unique. */
const urlQueryArb = query(fc.uniqueArray(fc.oneof(condition, sameKeyOr), { maxLength: 6, selector: keyOf }));

/** Any tree: the JSON form nests freely. */
const { tree } = fc.letrec<{ tree: Node }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    condition,
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), children: fc.array(tie('tree'), { maxLength: 3 }) }),
  ),
}));
const jsonQueryArb = query(fc.array(tree, { maxLength: 4 }));

const viaUrl = (q: Query): Query => parseUrl(new URLSearchParams(toUrlParams(q).toString()));
const viaJson = (q: Query): Query => parseUrl({ _q: JSON.stringify(toJson(q)) });
const compiled = (q: Query): unknown => {
  const { where, params, orderBy, limit, offset, group: g } = compile(q, SMS_FIELDS, { now });
  return { where, params, orderBy, limit, offset, group: g };
};

describe('spec 3 §1: the URL and JSON forms are equivalent', () => {
  test('URL-renderable queries: URL form ≡ JSON form ≡ the query itself', () => {
    fc.assert(
      fc.property(urlQueryArb, (q) => {
        const expected = compiled(q);
        expect(compiled(viaUrl(q))).toEqual(expected);
        expect(compiled(viaJson(q))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  test('any nested query survives the JSON form unchanged', () => {
    fc.assert(
      fc.property(jsonQueryArb, (q) => {
        const back = viaJson(q);
        expect(back).toEqual({ ...q, origin: 'json' });
        expect(compiled(back)).toEqual(compiled(q));
      }),
      { numRuns: 300 },
    );
  });

  test('the URL renderer refuses what the URL form cannot say', () => {
    const a: Condition = { kind: 'cond', field: 'status', operator: 'eq', value: 'a' };
    const b: Condition = { kind: 'cond', field: 'to', operator: 'eq', value: 'b' };
    const refuse = (children: Node[]): void => {
      expect(() => toUrlParams({ filter: { kind: 'and', children }, sort: [] })).toThrow(RangeError);
    };
    refuse([{ kind: 'or', children: [a, b] }]);
    refuse([{ kind: 'and', children: [a] }]);
    refuse([a, a]);
    refuse([{ kind: 'cond', field: 'to', operator: 'contains', value: 'x|y' }]);
    refuse([{ kind: 'cond', field: 'status', operator: 'in', value: [] }]);
  });
});

// Whatever the values, the WHERE text is our vocabulary only.
const COLUMNS = new Set(SMS_FIELDS.flatMap((f) => f.column.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []));
const VOCABULARY = new Set([
  ...COLUMNS, 'isNull', 'isNotNull', 'NOT', 'AND', 'OR', 'IN', 'lowerUTF8', 'arrayMap', 'arrayExists', 'position',
  'positionCaseInsensitiveUTF8', 'startsWith', 'endsWith', '_v',
]);

describe('DESIGN §5: only bound parameters and whitelisted identifiers in SQL', () => {
  test('WHERE = catalogue columns + our functions + placeholders', () => {
    fc.assert(
      fc.property(jsonQueryArb, (q) => {
        const { where, params } = compile(q, SMS_FIELDS, { now });
        const placeholders = where.match(/\{p\d+:[^}]+\}/g) ?? [];
        expect(placeholders.length).toBe(Object.keys(params).length);
        const bare = where.replace(/\{p\d+:[^}]+\}/g, ' ');
        for (const word of bare.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []) expect(VOCABULARY).toContain(word);
        expect(bare.replace(/''/g, '')).toMatch(/^[A-Za-z0-9_ ()=<>!,.\-/]*$/);
      }),
      { numRuns: 300 },
    );
  });
});
