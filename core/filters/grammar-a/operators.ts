// The value shape each operator takes (spec 3 §2.2, §4.1 rule 8). Shared by the URL parser
// (which decides where to split on `|`), the renderers and the compiler.
import type { Operator } from './ast';

/**
 * flag: true/false (exists). scalar: one value. list: array (in, nin, ...).
 * pair: two-element array (range family). text: one string or an array of strings.
 */
export type ValueShape = 'flag' | 'scalar' | 'list' | 'pair' | 'text';

export const OPERATOR_SHAPE: Readonly<Record<Operator, ValueShape>> = {
  exists: 'flag',
  eq: 'scalar', eqi: 'scalar', ne: 'scalar', nei: 'scalar',
  lt: 'scalar', lte: 'scalar', gt: 'scalar', gte: 'scalar',
  in: 'list', ini: 'list', nin: 'list', nini: 'list',
  contains: 'text', containsi: 'text', ncontains: 'text', ncontainsi: 'text',
  starts: 'text', startsi: 'text', ends: 'text', endsi: 'text',
  range: 'pair', between: 'pair', betweeneq: 'pair',
};

/** In URL form these shapes carry pipe-separated values. */
export function splitsOnPipe(operator: Operator, raw: string): boolean {
  const shape = OPERATOR_SHAPE[operator];
  return shape === 'list' || shape === 'pair' || (shape === 'text' && raw.includes('|'));
}
