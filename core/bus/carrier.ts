// The contract between the lifecycle (workflows, activities) and the carrier connector role,
// carried on the JetStream stream CARRIER (infra/nats.ts). Wire types only: plain JSON.

/** `carrier.submit`: one accepted message to hand to an upstream SMSC (all its segments). */
export interface CarrierSubmit {
  readonly messageId: string;
  readonly orgId: string;
  readonly from: string;
  /** Normalized E.164 with '+'. */
  readonly to: string;
  readonly country: string;
  /** What is sent (after transliteration). */
  readonly text: string;
  readonly encoding: 'GSM-7' | 'UCS-2';
  readonly segments: number;
  readonly submittedAt: string;
}

/** SMPP receipt states (`stat:` of the receipt text / message_state TLV). */
export const RECEIPT_STATES = ['ENROUTE', 'DELIVRD', 'EXPIRED', 'DELETED', 'UNDELIV', 'ACCEPTD', 'UNKNOWN', 'REJECTD'] as const;
export type ReceiptState = (typeof RECEIPT_STATES)[number];

/** `carrier.events`: what the connector learned about one segment of one message. */
export type CarrierEvent =
  | {
      readonly kind: 'submitted';
      readonly messageId: string;
      /** 0-based segment index. */
      readonly segment: number;
      readonly segments: number;
      readonly carrier: string;
      readonly carrierMessageId: string;
      readonly at: string;
    }
  | {
      readonly kind: 'submit_failed';
      readonly messageId: string;
      readonly segment: number;
      readonly segments: number;
      readonly carrier: string;
      /** SMPP command_status of the submit_sm_resp, or null when no carrier could be reached/routed. */
      readonly commandStatus: number | null;
      readonly reason: string;
      readonly at: string;
    }
  | {
      readonly kind: 'receipt';
      readonly messageId: string;
      readonly segment: number;
      readonly segments: number;
      readonly carrier: string;
      readonly carrierMessageId: string;
      readonly state: ReceiptState;
      /** The receipt's `err:` field as a number (our reason codes; see docs/carrier.md). */
      readonly err: number;
      readonly at: string;
    };

/**
 * `carrier.events` as the connector writes it: the events it learned in one turn, in the order
 * learned. A message of an earlier release holds one bare CarrierEvent; decodeCarrierEvents reads both.
 */
export interface CarrierEvents {
  readonly events: readonly CarrierEvent[];
}

/** `carrier.inbound`: a mobile-originated message received from a carrier. */
export interface CarrierInbound {
  readonly carrier: string;
  /** Sender (the handset), normalized with '+'. */
  readonly from: string;
  /** Our number or sender id that received it. */
  readonly to: string;
  readonly text: string;
  readonly at: string;
  /** Stable id for deduplication (carrier + its id or a hash). */
  readonly inboundId: string;
}
