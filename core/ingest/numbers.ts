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
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const PLUS = 0x2b;
const E = 0x65;
const UPPER_E = 0x45;

/** The offset of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    if (end < 0) return text.length; // unterminated: not valid JSON, nothing more to find
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/**
 * Every number of `text` (valid JSON, as the body guard parsed it) that would not be stored as
 * sent, with its path. One pass over the character codes, no recursion, nothing allocated for
 * the numbers that cannot have a problem: only a literal with 16 or more digits, an exponent of
 * three digits or a leading `-0` is weighed by numberProblem, and only then are the keys of
 * its path decoded.
 */
export function unfaithfulNumbers(text: string): UnfaithfulNumber[] {
  const found: UnfaithfulNumber[] = [];
  // Per open container: an array's current index, or the offset of an object's current key (-1 before the first).
  const at: number[] = [];
  const inArray: boolean[] = [];
  let expectKey = false;
  const length = text.length;
  let i = 0;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (expectKey) {
        at[at.length - 1] = i;
        expectKey = false;
      }
      i = end + 1;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = i;
      let digits = 0;
      let exponentDigits = -1; // -1 until the `e`
      for (i += 1; i < length; i += 1) {
        const d = text.charCodeAt(i);
        if (d >= ZERO && d <= NINE) {
          if (exponentDigits < 0) digits += 1;
          else exponentDigits += 1;
        } else if (d === E || d === UPPER_E) exponentDigits = 0;
        else if (d !== DOT && d !== PLUS && d !== MINUS) break;
      }
      if (c !== MINUS) digits += 1;
      const suspect = digits >= 16 || exponentDigits >= 3 || (c === MINUS && text.charCodeAt(start + 1) === ZERO);
      const problem = suspect ? numberProblem(text.slice(start, i)) : null;
      if (problem) found.push({ path: at.map((p, level) => (inArray[level] ? p : p < 0 ? '' : (JSON.parse(text.slice(p, stringEnd(text, p) + 1)) as string))), problem });
    } else {
      if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        inArray.push(c === OPEN_ARRAY);
        at.push(c === OPEN_ARRAY ? 0 : -1);
        expectKey = c === OPEN_OBJECT;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        inArray.pop();
        at.pop();
        expectKey = false;
      } else if (c === COMMA) {
        const array = inArray[inArray.length - 1] === true;
        if (array) at[at.length - 1] = (at[at.length - 1] as number) + 1;
        expectKey = !array;
      }
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
