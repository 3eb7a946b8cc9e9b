// One condition → one SQL boolean expression over a catalogue column and bound parameters.
// NULL semantics: positive operators never match NULL; the negated ones (ne, nei, nin,
// nini, ncontains, ncontainsi) match NULL ("not equal to x" includes "no value");
// exists=false matches NULL and, for string/id fields, the empty string.
import type { Condition, Operator } from './ast';
import { columnSql, operatorApplies, type FieldDef } from './catalogue';
import { MAX_LIST_VALUES } from './limits';
import { OPERATOR_SHAPE } from './operators';
import type { ParamBinder } from '../params';
import { invalidFilter, quote } from './problems';
import { coerceValue, PARAM_TYPE, toFlag, type Fail } from './values';

export interface ConditionContext {
  readonly def: FieldDef;
  /** The parameter the condition came from, for error details. */
  readonly param: string;
  readonly now: Date;
  readonly binder: ParamBinder;
}

type TextPredicate = (column: string, needle: string) => string;

const TEXT: Readonly<Partial<Record<Operator, TextPredicate>>> = {
  contains: (c, n) => `position(${c}, ${n}) > 0`,
  // Not positionCaseInsensitiveUTF8: ClickHouse 26.7 (chdb 3.4) misses a Greek capital match in
  // some blocks (test/integration/list-plan.test.ts); lowerUTF8 like startsi and endsi.
  containsi: (c, n) => `position(lowerUTF8(${c}), lowerUTF8(${n})) > 0`,
  starts: (c, n) => `startsWith(${c}, ${n})`,
  startsi: (c, n) => `startsWith(lowerUTF8(${c}), lowerUTF8(${n}))`,
  ends: (c, n) => `endsWith(${c}, ${n})`,
  endsi: (c, n) => `endsWith(lowerUTF8(${c}), lowerUTF8(${n}))`,
};

/** The positive operator each negated one inverts. */
const NEGATES: Readonly<Partial<Record<Operator, Operator>>> = {
  ne: 'eq', nei: 'eqi', nin: 'in', nini: 'ini', ncontains: 'contains', ncontainsi: 'containsi',
};

const COMPARE: Readonly<Partial<Record<Operator, string>>> = { eq: '=', lt: '<', lte: '<=', gt: '>', gte: '>=' };

const RANGE: Readonly<Partial<Record<Operator, readonly [string, string]>>> = {
  range: ['>=', '<'],
  between: ['>', '<'],
  betweeneq: ['>=', '<='],
};

export function conditionSql(cond: Condition, ctx: ConditionContext): string {
  const { def, param } = ctx;
  if (!operatorApplies(def.type, cond.operator)) {
    throw invalidFilter(`operator "${cond.operator}" does not apply to ${def.type} field "${def.name}" in parameter "${param}"`);
  }
  const c = columnSql(def);
  const positive = NEGATES[cond.operator];
  if (positive === undefined) return positiveSql(cond.operator, cond.value, c, ctx);
  const expr = positiveSql(positive, cond.value, c, ctx);
  return def.nullable ? `(isNull(${c}) OR NOT (${expr}))` : `NOT (${expr})`;
}

function positiveSql(op: Operator, value: unknown, c: string, ctx: ConditionContext): string {
  const fail = failure(op, ctx);
  const shape = OPERATOR_SHAPE[op];
  if (shape === 'flag') return existsSql(toFlag(value) ?? fail(value, 'true or false'), c, ctx.def);
  if (shape === 'scalar') {
    const p = bindOne(value, ctx, fail);
    if (op === 'eqi') return `lowerUTF8(${c}) = lowerUTF8(${p})`;
    return `${c} ${COMPARE[op] ?? '='} ${p}`;
  }
  if (shape === 'list') {
    const p = bindList(listOf(value, op, ctx, 1), ctx, fail);
    return op === 'ini' ? `lowerUTF8(${c}) IN arrayMap(_v -> lowerUTF8(_v), ${p})` : `${c} IN ${p}`;
  }
  if (shape === 'pair') {
    const [lo, hi] = listOf(value, op, ctx, 2);
    const [opLo, opHi] = RANGE[op] ?? ['>=', '<'];
    return `(${c} ${opLo} ${bindOne(lo, ctx, fail)} AND ${c} ${opHi} ${bindOne(hi, ctx, fail)})`;
  }
  const predicate = TEXT[op];
  if (predicate === undefined) throw new Error(`grammar-a: no SQL for operator ${op}`);
  const needles = typeof value === 'string' ? [value] : listOf(value, op, ctx, 1);
  if (needles.length === 1) return predicate(c, bindOne(needles[0], ctx, fail));
  return `arrayExists(_v -> ${predicate(c, '_v')}, ${bindList(needles, ctx, fail)})`;
}

function existsSql(flag: boolean, c: string, def: FieldDef): string {
  const texty = def.type === 'string' || def.type === 'id';
  if (flag) return texty ? `(isNotNull(${c}) AND ${c} != '')` : `isNotNull(${c})`;
  return texty ? `(isNull(${c}) OR ${c} = '')` : `isNull(${c})`;
}

type ValueFail = (value: unknown, expected: string) => never;

function failure(op: Operator, ctx: ConditionContext): ValueFail {
  return (value, expected) => {
    throw invalidFilter(
      `invalid value ${quote(value)} for operator "${op}" on field "${ctx.def.name}" in parameter "${ctx.param}": expected ${expected}`,
    );
  };
}

function bindOne(value: unknown, ctx: ConditionContext, fail: ValueFail): string {
  const f: Fail = (expected) => fail(value, expected);
  return ctx.binder.bind(PARAM_TYPE[ctx.def.type], coerceValue(ctx.def.type, value, ctx.now, f));
}

function bindList(values: readonly unknown[], ctx: ConditionContext, fail: ValueFail): string {
  const typed = values.map((v) => coerceValue(ctx.def.type, v, ctx.now, (expected) => fail(v, expected)));
  return ctx.binder.bind(`Array(${PARAM_TYPE[ctx.def.type]})`, typed);
}

/** The value as an array: `exactly` 2 for the range family, otherwise at least `min`. */
function listOf(value: unknown, op: Operator, ctx: ConditionContext, min: number): unknown[] {
  const where = `operator "${op}" on field "${ctx.def.name}" in parameter "${ctx.param}"`;
  if (OPERATOR_SHAPE[op] === 'pair') {
    if (!Array.isArray(value) || value.length !== 2) throw invalidFilter(`${where} takes exactly 2 values (min|max)`);
    return value;
  }
  if (!Array.isArray(value) || value.length < min) throw invalidFilter(`${where} takes a non-empty list of values`);
  if (value.length > MAX_LIST_VALUES) throw invalidFilter(`${where} takes at most ${MAX_LIST_VALUES} values`);
  return value;
}
