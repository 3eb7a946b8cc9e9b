// validity_period of a submit_sm (SMPP 3.4 §7.1.1, "YYMMDDhhmmsstnnp") as seconds from now: the
// absolute format ('+'/'-': local time with its offset from UTC in quarter hours) and the
// relative one ('R': years, months, days, hours, minutes, seconds from now). Pure: `now` is given.
// Its YYMMDDhhmmss is read as receipt dates are (core/carrier/receipt.ts parseReceiptDate).
import { parseReceiptDate } from '../../core/carrier/receipt';
import { VALIDITY_PERIOD_MAX_SECONDS, VALIDITY_PERIOD_MIN_SECONDS } from '../../core/schemas/sms';

export type ValidityPeriod =
  | { readonly kind: 'default' }
  | { readonly kind: 'seconds'; readonly seconds: number }
  | { readonly kind: 'invalid'; readonly reason: string };

const FORMAT = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d)(\d{2})([-+R])$/;
const BOUNDS = `${VALIDITY_PERIOD_MIN_SECONDS} seconds (1 minute) to ${VALIDITY_PERIOD_MAX_SECONDS} seconds (72 hours)`;
const QUARTER_HOUR_MS = 15 * 60_000;

/** Seconds from `nowMs` the field asks for; empty: the platform default (MESSAGE_VALIDITY_SECONDS). */
export function parseValidityPeriod(field: string, nowMs: number): ValidityPeriod {
  if (field === '') return { kind: 'default' };
  const m = FORMAT.exec(field);
  if (!m) return { kind: 'invalid', reason: `validity_period "${field}" is not in the SMPP time format YYMMDDhhmmsstnnp (p '+', '-' or 'R')` };
  const [yy, mo, dd, hh, mi, ss, t, nn] = m.slice(1, 9).map(Number) as [number, number, number, number, number, number, number, number];
  const p = m[9];
  let seconds: number;
  if (p === 'R') {
    // Any year or month is longer than the 72 h the platform keeps a message.
    if (yy > 0 || mo > 0) return { kind: 'invalid', reason: `validity_period "${field}" is longer than the longest validity period, ${BOUNDS}` };
    seconds = dd * 86_400 + hh * 3_600 + mi * 60 + ss;
  } else {
    const local = parseReceiptDate(field.slice(0, 12));
    if (!local || nn > 48) return { kind: 'invalid', reason: `validity_period "${field}" is not a valid absolute time` };
    // '+': the local time is ahead of UTC by nn quarter hours; '-': behind.
    const utc = local.getTime() + t * 100 - (p === '+' ? 1 : -1) * nn * QUARTER_HOUR_MS;
    seconds = Math.round((utc - nowMs) / 1000);
  }
  if (seconds < VALIDITY_PERIOD_MIN_SECONDS || seconds > VALIDITY_PERIOD_MAX_SECONDS) {
    return { kind: 'invalid', reason: `validity_period "${field}" is ${seconds} seconds from now; it must be ${BOUNDS}` };
  }
  return { kind: 'seconds', seconds };
}
