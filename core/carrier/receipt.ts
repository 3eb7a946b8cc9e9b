// SMPP delivery receipts: the de facto standard receipt text carried in a deliver_sm
//   id:<id> sub:001 dlvrd:001 submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DELIVRD err:000 text:...
// formatted by the carrier simulator and parsed by the carrier connector, plus the
// message_state TLV values. Carriers vary, so parsing tolerates any field order, any case,
// missing fields and long state names; text is only ever read here, once, at the boundary.
import { RECEIPT_STATES, type ReceiptState } from './types';

export interface ReceiptText {
  readonly id: string;
  readonly submitted: Date;
  readonly done: Date;
  readonly state: ReceiptState;
  readonly err: number;
  /** The first characters of the message (at most 20 are written). */
  readonly text: string;
  readonly sub?: number;
  readonly dlvrd?: number;
}

export interface ParsedReceipt {
  readonly id: string | undefined;
  readonly state: ReceiptState | undefined;
  /** The `err:` field as a decimal number; undefined when missing or not decimal digits. */
  readonly err: number | undefined;
  readonly submitted: Date | undefined;
  readonly done: Date | undefined;
  readonly sub: number | undefined;
  readonly dlvrd: number | undefined;
  readonly text: string | undefined;
}

const TEXT_CHARS = 20;

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** SMPP receipt date, YYMMDDhhmm in UTC. */
export function formatReceiptDate(date: Date): string {
  return pad(date.getUTCFullYear() % 100, 2) + pad(date.getUTCMonth() + 1, 2) + pad(date.getUTCDate(), 2) + pad(date.getUTCHours(), 2) + pad(date.getUTCMinutes(), 2);
}

/** YYMMDDhhmm or YYMMDDhhmmss, read as UTC in the 2000s; undefined when not a valid date. */
export function parseReceiptDate(value: string): Date | undefined {
  const m = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?$/.exec(value.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map((part) => Number(part ?? '0')) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second));
  const valid = date.getUTCMonth() === month - 1 && date.getUTCDate() === day && hour < 24 && minute < 60 && second < 60;
  return valid ? date : undefined;
}

export function formatReceipt(receipt: ReceiptText): string {
  return [
    `id:${receipt.id}`,
    `sub:${pad(receipt.sub ?? 1, 3)}`,
    `dlvrd:${pad(receipt.dlvrd ?? (receipt.state === 'DELIVRD' ? 1 : 0), 3)}`,
    `submit date:${formatReceiptDate(receipt.submitted)}`,
    `done date:${formatReceiptDate(receipt.done)}`,
    `stat:${receipt.state}`,
    `err:${pad(receipt.err, 3)}`,
    `text:${[...receipt.text].slice(0, TEXT_CHARS).join('')}`,
  ].join(' ');
}

// Long or variant spellings some SMSCs use for the seven-character states.
const STATE_ALIASES: Readonly<Record<string, ReceiptState>> = {
  DELIVERED: 'DELIVRD',
  UNDELIVERABLE: 'UNDELIV',
  UNDELIVERED: 'UNDELIV',
  ACCEPTED: 'ACCEPTD',
  REJECTED: 'REJECTD',
  EXPIRD: 'EXPIRED',
  DELETD: 'DELETED',
  ENROUTED: 'ENROUTE',
  BUFFERED: 'ENROUTE',
};

export function normalizeReceiptState(value: string): ReceiptState | undefined {
  const upper = value.trim().toUpperCase();
  if ((RECEIPT_STATES as readonly string[]).includes(upper)) return upper as ReceiptState;
  return STATE_ALIASES[upper];
}

type Field = 'id' | 'sub' | 'dlvrd' | 'submit date' | 'done date' | 'stat' | 'err' | 'text';

// A key starts the text or follows whitespace; "submit_date" and "submitdate" occur in the wild.
const KEY = /(^|\s)(id|sub|dlvrd|submit[ _]?date|done[ _]?date|stat|err|text)\s*:/gi;

function fieldOf(key: string): Field {
  const lower = key.toLowerCase();
  if (lower.startsWith('submit')) return 'submit date';
  if (lower.startsWith('done')) return 'done date';
  return lower as Field;
}

/**
 * Reads a receipt text. A key already seen (for example "id:" inside the message excerpt after
 * "text:") is part of the previous value, so the excerpt may contain anything.
 */
export function parseReceipt(input: string): ParsedReceipt {
  const marks: Array<{ field: Field; keyStart: number; valueStart: number }> = [];
  const seen = new Set<Field>();
  for (const m of input.matchAll(KEY)) {
    const field = fieldOf(m[2] ?? '');
    if (seen.has(field)) continue;
    seen.add(field);
    const keyStart = (m.index ?? 0) + (m[1] ?? '').length;
    marks.push({ field, keyStart, valueStart: (m.index ?? 0) + m[0].length });
  }
  const values = new Map<Field, string>();
  marks.forEach((mark, i) => {
    const end = marks[i + 1]?.keyStart ?? input.length;
    const raw = input.slice(mark.valueStart, end);
    values.set(mark.field, mark.field === 'text' ? raw.replace(/^\s/, '').replace(/\s+$/, '') : raw.trim());
  });
  const int = (field: Field): number | undefined => {
    const value = values.get(field);
    return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
  };
  const date = (field: Field): Date | undefined => {
    const value = values.get(field);
    return value === undefined ? undefined : parseReceiptDate(value);
  };
  const id = values.get('id');
  const stat = values.get('stat');
  return {
    id: id === undefined || id === '' ? undefined : id,
    state: stat === undefined ? undefined : normalizeReceiptState(stat),
    err: int('err'),
    submitted: date('submit date'),
    done: date('done date'),
    sub: int('sub'),
    dlvrd: int('dlvrd'),
    text: values.get('text'),
  };
}

/** message_state TLV values (SMPP v3.4 §5.2.28 / v5.0 §4.8.4.37). */
export const MESSAGE_STATE: Readonly<Record<ReceiptState, number>> = {
  ENROUTE: 1,
  DELIVRD: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNDELIV: 5,
  ACCEPTD: 6,
  UNKNOWN: 7,
  REJECTD: 8,
};

export function stateOfMessageState(value: number): ReceiptState | undefined {
  return (Object.keys(MESSAGE_STATE) as ReceiptState[]).find((state) => MESSAGE_STATE[state] === value);
}

/**
 * The `err` carried on a receipt event when the receipt has none (or one that is not decimal):
 * success-like states get 0, EXPIRED gets 1 (unknown), REJECTD 100 (reject), the rest 99.
 */
export function defaultErr(state: ReceiptState): number {
  switch (state) {
    case 'ENROUTE':
    case 'DELIVRD':
    case 'ACCEPTD':
    case 'DELETED':
      return 0;
    case 'EXPIRED':
      return 1;
    case 'REJECTD':
      return 100;
    case 'UNDELIV':
    case 'UNKNOWN':
      return 99;
  }
}
