// The SMPP time fields of a submit_sm (SMPP 3.4 §7.1.1, "YYMMDDhhmmsstnnp"): the absolute format
// ('+'/'-': local time with its offset from UTC in quarter hours) and the relative one ('R':
// years, months, days, hours, minutes, seconds from now). validity_period becomes seconds from
// now, schedule_delivery_time the time to send (DESIGN §4 Scheduling). Pure: `now` is given.
// Its YYMMDDhhmmss is read as receipt dates are (core/carrier/receipt.ts parseReceiptDate).
import { parseReceiptDate } from '../../core/carrier';
import { VALIDITY_PERIOD_MAX_SECONDS, VALIDITY_PERIOD_MIN_SECONDS } from '../../schemas/sms';

export type ValidityPeriod =
  | { readonly kind: 'default' }
  | { readonly kind: 'seconds'; readonly seconds: number }
  | { readonly kind: 'invalid'; readonly reason: string };

export type ScheduleDeliveryTime =
  | { readonly kind: 'now' }
  | { readonly kind: 'at'; readonly iso: string }
  | { readonly kind: 'invalid'; readonly reason: string };

const FORMAT = /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d)(\d{2})([-+R])$/;
const BOUNDS = `${VALIDITY_PERIOD_MIN_SECONDS} seconds (1 minute) to ${VALIDITY_PERIOD_MAX_SECONDS} seconds (72 hours)`;
const QUARTER_HOUR_MS = 15 * 60_000;

type SmppTime = { readonly ok: true; readonly atMs: number; readonly relativeMonths: number } | { readonly ok: false; readonly reason: string };

/** The epoch ms a non-empty SMPP time field names, counted from `nowMs` when relative. */
function smppTime(name: string, field: string, nowMs: number): SmppTime {
  const m = FORMAT.exec(field);
  if (!m) return { ok: false, reason: `${name} "${field}" is not in the SMPP time format YYMMDDhhmmsstnnp (p '+', '-' or 'R')` };
  const [yy, mo, dd, hh, mi, ss, t, nn] = m.slice(1, 9).map(Number) as [number, number, number, number, number, number, number, number];
  const p = m[9];
  if (p === 'R') {
    // Years and months are calendar steps from now; the rest a fixed length.
    const at = new Date(nowMs);
    if (yy > 0 || mo > 0) at.setUTCMonth(at.getUTCMonth() + yy * 12 + mo);
    return { ok: true, atMs: at.getTime() + ((dd * 24 + hh) * 60 + mi) * 60_000 + ss * 1000, relativeMonths: yy * 12 + mo };
  }
  const local = parseReceiptDate(field.slice(0, 12));
  if (!local || nn > 48) return { ok: false, reason: `${name} "${field}" is not a valid absolute time` };
  // '+': the local time is ahead of UTC by nn quarter hours; '-': behind.
  return { ok: true, atMs: local.getTime() + t * 100 - (p === '+' ? 1 : -1) * nn * QUARTER_HOUR_MS, relativeMonths: 0 };
}

/** Seconds from `nowMs` the field asks for; empty: the platform default (MESSAGE_VALIDITY_SECONDS). */
export function parseValidityPeriod(field: string, nowMs: number): ValidityPeriod {
  if (field === '') return { kind: 'default' };
  const time = smppTime('validity_period', field, nowMs);
  if (!time.ok) return { kind: 'invalid', reason: time.reason };
  // Any year or month is longer than the 72 h the platform keeps a message.
  if (time.relativeMonths > 0) return { kind: 'invalid', reason: `validity_period "${field}" is longer than the longest validity period, ${BOUNDS}` };
  const seconds = Math.round((time.atMs - nowMs) / 1000);
  if (seconds < VALIDITY_PERIOD_MIN_SECONDS || seconds > VALIDITY_PERIOD_MAX_SECONDS) {
    return { kind: 'invalid', reason: `validity_period "${field}" is ${seconds} seconds from now; it must be ${BOUNDS}` };
  }
  return { kind: 'seconds', seconds };
}

/**
 * schedule_delivery_time as the item's scheduledAt (ISO 8601 UTC); empty: send at once. Its
 * bounds (now to 35 days ahead) are the acceptance core's, as for HTTP (core/sms/validate.ts).
 */
export function parseScheduleDeliveryTime(field: string, nowMs: number): ScheduleDeliveryTime {
  if (field === '') return { kind: 'now' };
  const time = smppTime('schedule_delivery_time', field, nowMs);
  if (!time.ok) return { kind: 'invalid', reason: time.reason };
  return { kind: 'at', iso: new Date(time.atMs).toISOString() };
}
