// What the SMS acceptance core needs from the outside world, as interfaces; the NATS-backed
// implementations live in stores/.
import type { Price, PriceKind, Token } from '../accounts/types';
import type { HoldRef } from '../bus/names';
import type { SmsMessage } from './message';
import type { OptOutList } from './opt-out';

export interface PriceBook {
  price(orgId: string, kind: PriceKind, country: string): Price | undefined;
}

/** A charge held open until what it paid for is on the stream (Balance.holds). */
export interface HoldSpec {
  readonly id: string;
  /** Message ids a retry could find by clientId (canceled if the hold is refunded). */
  readonly ids?: readonly string[];
}

export interface Funds {
  /** Takes the amount if the balance covers it, holding it open under `hold` in the same write; false otherwise. */
  charge(orgId: string, micros: number, hold?: HoldSpec): Promise<boolean>;
  /** Adds the amount back; with `holdId`, the hold of the charge it reverses is dropped in the same write. */
  credit(orgId: string, micros: number, holdId?: string): Promise<void>;
  /**
   * The held charge is final: what it paid for is on the stream. Not awaited by the caller:
   * if this write is lost the charge settler settles it from the stream's header.
   */
  settle(orgId: string, holdId: string): void;
  /** Whether a charge held open covers this message (its request has not reached the stream, or died before). */
  isHeld(orgId: string, messageId: string): Promise<boolean>;
}

export interface MessageStates {
  putAll(messages: readonly SmsMessage[]): Promise<void>;
  get(id: string): Promise<SmsMessage | null>;
}

export interface ClientIds {
  /** Claims clientId for the message id; returns the id that already holds it, if any. */
  claim(scope: string, clientId: string, messageId: string): Promise<string | null>;
  /** Moves the claim from `heldBy` to `messageId` by compare-and-set; false when it no longer names `heldBy`. */
  takeOver(scope: string, clientId: string, heldBy: string, messageId: string): Promise<boolean>;
  /** Frees the claim if `messageId` still holds it (a claim taken over stays with its new holder). */
  release(scope: string, clientId: string, messageId: string): Promise<void>;
}

export interface AcceptedQueue {
  /**
   * Durably queues accepted messages for history and the lifecycle (one stream message), naming
   * the charge hold it settles (the header the charge settler reads).
   */
  enqueue(messages: readonly SmsMessage[], hold?: HoldRef): Promise<void>;
}

export interface OptOuts {
  /** A boolean when the answer is at hand (an in-memory mirror), a promise otherwise. */
  isOptedOut(projectId: string, number: string): boolean | Promise<boolean>;
}

/** Records a STOP and lifts it on START (the lifecycle bridge, on an inbound keyword): the writes of an opt-out list. */
export type OptOutRecorder = Pick<OptOutList, 'optOut' | 'optIn'>;

/** Which token owns one of our two-way numbers. */
export interface NumberDirectory {
  tokenByNumber(number: string): Token | undefined;
  /** The organization of a token (its currency names the zero prices of an inbound message's row). */
  org(id: string): { readonly currency: string } | undefined;
}
