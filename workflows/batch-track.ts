// One message inside a batch lifecycle: its state machine, DLR sequence and DLRs waiting for
// delivery. Pure (no I/O, no clock), so the batch workflow and unit tests share it.
import type { CarrierEvent } from '../core/carrier/types';
import type { DlrDelivery, DlrPayload, Transition } from '../core/sms/dlr';
import { aggregate, applyEvent, CODE_UNKNOWN, initialState, isFinal, refundable, transitionsBetween, type MessageState } from '../core/sms/lifecycle-rules';
import type { MessageStatus } from '../core/sms/message';
import type { BatchSettleItem } from '../activities/lifecycle-batch';

/** What a batch needs to know of each message (ids and small values; DESIGN §3a). */
export interface BatchMember {
  readonly id: string;
  readonly orgId: string;
  readonly tokenId: string;
  readonly clientId: string | null;
  readonly segments: number;
  readonly chargedMicros: number;
  /** DLR webhooks are sent for api_sms messages; legacy messages are polled (spec 1 §1). */
  readonly webhooks: boolean;
  /** The message's own validity period from the batch's start; absent: the batch's `validityMs`. */
  readonly validityMs?: number;
}

export interface PendingDlr {
  readonly delivery: DlrDelivery;
  /** Its first attempt was made (and failed), or skipped on purpose: go straight to the retry schedule. */
  readonly attempted: boolean;
}

export interface Track {
  readonly member: BatchMember;
  state: MessageState;
  current: { status: MessageStatus; code: number | null };
  seq: number;
  /** DLRs not delivered by a settle, in order: the head is retrying, the rest wait for it. */
  pending: PendingDlr[];
  /** A retry loop is working through `pending`. */
  retrying: boolean;
}

/** A track as carried over by continue-as-new. */
export type CarriedTrack = Pick<Track, 'member' | 'state' | 'current' | 'seq' | 'pending'>;

export type Change = { readonly status: MessageStatus; readonly code: number };

export function newTrack(member: BatchMember): Track {
  const state = initialState(member.segments);
  return { member, state, current: aggregate(state), seq: 0, pending: [], retrying: false };
}

export function restoreTrack(carried: CarriedTrack): Track {
  return { ...carried, pending: [...carried.pending], retrying: false };
}

export function carry(track: Track): CarriedTrack {
  return { member: track.member, state: track.state, current: track.current, seq: track.seq, pending: track.pending };
}

export function finished(track: Track): boolean {
  return isFinal(track.current.status);
}

/** A message is done when it is final and none of its DLRs waits. */
export function done(track: Track): boolean {
  return finished(track) && track.pending.length === 0 && !track.retrying;
}

/** Applies a message's events in order; the statuses to report, one DLR each. */
export function advance(track: Track, events: readonly CarrierEvent[]): Change[] {
  const changes: Change[] = [];
  let reached = track.current.status;
  for (const event of events) {
    track.state = applyEvent(track.state, event);
    const next = aggregate(track.state);
    for (const status of transitionsBetween(reached, next.status)) changes.push({ status, code: status === next.status ? next.code ?? 0 : 0 });
    reached = next.status;
  }
  return changes;
}

/**
 * The epoch ms past which a member with no final report expires: its own validity period from the
 * batch's start, else the batch's deadline. From the input only (deterministic on replay).
 */
export function deadlineOf(member: BatchMember, batchStart: number, batchDeadline: number): number {
  return member.validityMs === undefined ? batchDeadline : batchStart + member.validityMs;
}

/** No final report within the validity period: expired, code 1 (DESIGN §4). */
export function expire(track: Track): Change[] {
  return finished(track) ? [] : [{ status: 'expired', code: CODE_UNKNOWN }];
}

/**
 * Numbers the changes, moves the track to the last one and builds its settle item: the DLRs to
 * attempt now (none while an earlier one waits) and the refund of an error that never reached a
 * carrier. Answers the item and every DLR of the changes.
 */
export function settleItem(track: Track, changes: readonly Change[], eventAt: string): { item: BatchSettleItem; deliveries: DlrDelivery[] } {
  const m = track.member;
  const transitions: Transition[] = changes.map((c) => ({ messageId: m.id, seq: ++track.seq, status: c.status, code: c.code, eventAt }));
  const wasFinal = finished(track);
  track.current = changes[changes.length - 1] ?? track.current;
  const deliveries: DlrDelivery[] = m.webhooks ? transitions.map((t) => ({ tokenId: m.tokenId, messageId: m.id, seq: t.seq, payload: dlrPayload(m, t) })) : [];
  const waiting = track.pending.length > 0 || track.retrying;
  const item: { -readonly [K in keyof BatchSettleItem]: BatchSettleItem[K] } = { tokenId: m.tokenId, transitions, deliverNow: waiting ? [] : deliveries };
  if (!wasFinal && finished(track) && refundable(track.state)) item.refund = { orgId: m.orgId, micros: m.chargedMicros };
  return { item, deliveries };
}

// Built without object spreads (a helper call each in a workflow bundle); `clientId` only when set.
function dlrPayload(m: BatchMember, t: Transition): DlrPayload {
  return m.clientId
    ? { id: m.id, clientId: m.clientId, status: t.status, code: t.code, eventAt: t.eventAt }
    : { id: m.id, status: t.status, code: t.code, eventAt: t.eventAt };
}
