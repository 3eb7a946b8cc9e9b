// The message state machine as pure functions (spec 1 §3, DESIGN §4 receipt mapping), used by
// the lifecycle workflow; no I/O, no clock, so workflow code may import it.
//
// Aggregate rule for multi-segment messages (docs/lifecycle.md):
//   - the first segment to fail (failed, rejected, error, expired, canceled, unknown) decides
//     the message's final status and code;
//   - otherwise the message is as far as its least advanced segment (queued < sent < accepted
//     < buffered < delivered), so it is `delivered` only when every segment is delivered.
// One DLR is sent per change of the aggregate.
import type { CarrierEvent, ReceiptState } from '../carrier/types';
import type { MessageStatus } from './message';

export const RECEIPT_STATUS: Readonly<Record<ReceiptState, MessageStatus>> = {
  ENROUTE: 'buffered',
  DELIVRD: 'delivered',
  EXPIRED: 'expired',
  DELETED: 'canceled',
  UNDELIV: 'failed',
  ACCEPTD: 'accepted',
  UNKNOWN: 'unknown',
  REJECTD: 'rejected',
};

const KNOWN_CODES = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 99, 100]);

/** Receipt `err:` → reason code (spec 1 §2.6): codes we know pass through, anything else is 99. */
export function errToCode(err: number): number {
  return KNOWN_CODES.has(err) ? err : 99;
}

export const CODE_OK = 0;
export const CODE_UNKNOWN = 1;
/** A scheduled message whose recipient opted out (STOP) before its time: rejected (DESIGN §4 Scheduling). */
export const CODE_BLOCKED_SUBSCRIBER = 4;
export const CODE_UNROUTABLE = 11;
export const CODE_REJECT = 100;

const PROGRESS: Readonly<Partial<Record<MessageStatus, number>>> = { queued: 0, sent: 1, accepted: 2, buffered: 3, delivered: 4 };
const FAILURES: ReadonlySet<MessageStatus> = new Set(['failed', 'rejected', 'error', 'expired', 'canceled', 'unknown']);

export function isFinal(status: MessageStatus): boolean {
  return status === 'delivered' || FAILURES.has(status);
}

/**
 * How far a message has come: queued 0 … buffered 3, any final status 4. A message's status only
 * ever moves up, so a write that would move it down is a stale one (a retried activity's
 * abandoned first attempt finishing late) and must not land.
 */
export function progressRank(status: MessageStatus): number {
  return isFinal(status) ? 4 : PROGRESS[status] ?? 0;
}

export interface SegmentState {
  readonly status: MessageStatus;
  readonly code: number | null;
  /** Whether a carrier accepted this segment (a successful submit_sm_resp). */
  readonly reachedCarrier: boolean;
}

export interface MessageState {
  readonly segments: readonly SegmentState[];
  /** Set once, by the first segment that fails. */
  readonly firstFailure: { readonly status: MessageStatus; readonly code: number } | null;
}

export function initialState(segments: number): MessageState {
  return { segments: Array.from({ length: Math.max(1, segments) }, () => ({ status: 'queued' as const, code: null, reachedCarrier: false })), firstFailure: null };
}

function segmentUpdate(event: CarrierEvent): { status: MessageStatus; code: number | null; reachedCarrier?: boolean } {
  switch (event.kind) {
    case 'submitted':
      return { status: 'sent', code: 0, reachedCarrier: true };
    case 'submit_failed':
      return { status: 'error', code: event.commandStatus === null ? CODE_UNROUTABLE : CODE_REJECT };
    case 'receipt': {
      const status = RECEIPT_STATUS[event.state];
      return { status, code: FAILURES.has(status) ? errToCode(event.err) : 0 };
    }
  }
}

/** Applies one carrier event; a segment never moves backwards, and a final segment never changes. */
export function applyEvent(state: MessageState, event: CarrierEvent): MessageState {
  const index = event.segment;
  const current = state.segments[index];
  if (!current || isFinal(current.status)) return state;
  const update = segmentUpdate(event);
  const forward = FAILURES.has(update.status) || (PROGRESS[update.status] ?? 0) > (PROGRESS[current.status] ?? 0);
  const reachedCarrier = current.reachedCarrier || Boolean(update.reachedCarrier);
  if (!forward) return reachedCarrier === current.reachedCarrier ? state : replaceSegment(state, index, { status: current.status, code: current.code, reachedCarrier }, state.firstFailure);
  const failed = FAILURES.has(update.status);
  const firstFailure = failed && !state.firstFailure ? { status: update.status, code: update.code ?? CODE_UNKNOWN } : state.firstFailure;
  return replaceSegment(state, index, { status: update.status, code: update.code, reachedCarrier }, firstFailure);
}

// Object literals, not spreads: workflow bundles compile a spread into a helper call, which
// costs the workflow thread more than the rest of this function (a few per message).
function replaceSegment(state: MessageState, index: number, segment: SegmentState, firstFailure: MessageState['firstFailure']): MessageState {
  return { segments: state.segments.map((s, i) => (i === index ? segment : s)), firstFailure };
}

export function aggregate(state: MessageState): { status: MessageStatus; code: number | null } {
  if (state.firstFailure) return { status: state.firstFailure.status, code: state.firstFailure.code };
  let least = Infinity;
  for (const s of state.segments) least = Math.min(least, PROGRESS[s.status] ?? 0);
  const status = (Object.keys(PROGRESS) as MessageStatus[]).find((k) => PROGRESS[k] === least) ?? 'queued';
  return { status, code: status === 'queued' ? null : 0 };
}

/** An error outcome that never reached any carrier is refunded (DESIGN §4). */
export function refundable(state: MessageState): boolean {
  return aggregate(state).status === 'error' && state.segments.every((s) => !s.reachedCarrier);
}

/**
 * The statuses to report when the aggregate moves from `from` to `to`. Any carrier report
 * implies the message was sent, so a report that overtakes the submit acknowledgement (after a
 * reconnect, say) still yields `sent` first; `error` (never reached a carrier) does not.
 */
export function transitionsBetween(from: MessageStatus, to: MessageStatus): MessageStatus[] {
  if (from === to) return [];
  if (from === 'queued' && to !== 'sent' && to !== 'error' && to !== 'queued') return ['sent', to];
  return [to];
}
