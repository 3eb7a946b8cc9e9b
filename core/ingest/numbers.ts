// Numbers of a request body that JSON.parse cannot hold as sent: integers beyond 2^53, more
// significant digits than a 64-bit float keeps, -0, and values that overflow or underflow. By
// the time a handler sees the parsed body they are already changed (9007199254740993 reads as
// ...992, -0 would be written as 0), so they are found in the raw text, with the path of each,
// and the item holding one is refused instead of storing another value than the client sent.
// Node 20's JSON.parse gives revivers no source text, hence a scan of our own.

/** A number literal of the body and where it is: `path[0]` is the item's index in the batch. */
export interface UnfaithfulNumber {
  readonly path: ReadonlyArray<string | number>;
  readonly problem: string;
}

/**
 * Cheap test that a body may hold such a number: 16 or more digits in a row (a dot allowed
 * between), `-0` not followed by a digit, or an exponent of three digits. Bodies without one
 * (almost all) skip the scan.
 */
const SUSPECT = /\d(?:\.?\d){15}|-0(?!\d)|[eE][+-]?\d{3}/;

/** `digits` without leading or trailing zeros and the power of ten of its last digit: "1.50e2" and "150" are both `15e1`. */
function canonical(literal: string): string {
  const unsigned = literal.startsWith('-') ? literal.slice(1) : literal;
  const [mantissa = '', exponent = '0'] = unsigned.toLowerCase().split('e');
  const [whole = '', fraction = ''] = mantissa.split('.');
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  return `${trimmed}e${Number(exponent) - fraction.length + (digits.length - trimmed.length)}`;
}

const MAX_SAFE = '9007199254740991';

/** Why `literal` does not survive JSON.parse unchanged, or null when it does. */
export function numberProblem(literal: string): string | null {
  const value = Number(literal);
  const shown = literal.length > 40 ? `${literal.slice(0, 40)}…` : literal;
  if (Object.is(value, -0)) return `is ${shown}, which is stored as 0: send 0`;
  if (!Number.isFinite(value)) return `is ${shown}, beyond the range of a 64-bit float (about 1.8e308): send it as a string`;
  if (canonical(literal) === canonical(String(value))) return null;
  if (/^-?\d+$/.test(literal)) return `is ${shown}, beyond 2^53 (${MAX_SAFE}): a 64-bit float would store ${String(value)}; send it as a string`;
  return `is ${shown}, more precision than a 64-bit float holds: it would be stored as ${String(value)}; send it as a string or with at most 15 significant digits`;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Every number of `text` (valid JSON, as the body guard parsed it) that would not be stored as
 * sent, with its path. One pass, no recursion.
 */
export function unfaithfulNumbers(text: string): UnfaithfulNumber[] {
  if (!SUSPECT.test(text)) return [];
  const found: UnfaithfulNumber[] = [];
  const path: Array<string | number> = [];
  const containers: Array<'array' | 'object'> = [];
  let expectKey = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '[' || c === '{') {
      containers.push(c === '[' ? 'array' : 'object');
      path.push(c === '[' ? 0 : '');
      expectKey = c === '{';
      i += 1;
    } else if (c === ']' || c === '}') {
      containers.pop();
      path.pop();
      expectKey = false;
      i += 1;
    } else if (c === ',') {
      const inArray = containers.at(-1) === 'array';
      if (inArray) path[path.length - 1] = (path.at(-1) as number) + 1;
      expectKey = !inArray;
      i += 1;
    } else if (c === '"') {
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
      if (expectKey) {
        path[path.length - 1] = JSON.parse(text.slice(i, end + 1)) as string;
        expectKey = false;
      }
      i = end + 1;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      let end = i + 1;
      while (end < text.length && /[-+.eE0-9]/.test(text[end] as string)) end += 1;
      const problem = numberProblem(text.slice(i, end));
      if (problem) found.push({ path: [...path], problem });
      i = end;
    } else {
      i += 1; // whitespace, ':', and the letters of true, false, null
    }
  }
  return found;
}

/** The problems of one item, keyed by the item's index (`path[0]`), each with the path inside the item. */
export function unfaithfulByItem(text: string): Map<number, UnfaithfulNumber[]> {
  const byItem = new Map<number, UnfaithfulNumber[]>();
  for (const { path, problem } of unfaithfulNumbers(text)) {
    const [index, ...rest] = path;
    if (typeof index !== 'number') continue; // not in an array: the body is refused as a whole
    const list = byItem.get(index) ?? [];
    list.push({ path: rest, problem });
    byItem.set(index, list);
  }
  return byItem;
}

/** `a.b[2].c` */
export function pathText(path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}
