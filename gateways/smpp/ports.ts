// What the SMPP gateway needs from the rest of the system, as interfaces: the account
// directory (a watched in-memory mirror), the message states (query_sm), and a durable feed
// of the status transitions and inbound messages of one token. The JetStream/KV implementations are in ./jetstream.ts.
import type { Organization, Token } from '../../core/accounts';
import type { SmsMessage } from '../../core/sms';
import type { InboundRecord } from '../../core/bus/payloads';
import type { ReceiptInput } from './receipts';

export interface SmppDirectory {
  tokenBySystemId(systemId: string): Token | undefined;
  token(id: string): Token | undefined;
  org(id: string): Organization | undefined;
}

export interface MessageReader {
  get(id: string): Promise<SmsMessage | null>;
}

/** cancel_sm of a scheduled message (core/sms/schedule.ts ScheduledCancel). */
export interface ScheduledCanceler {
  cancel(scope: { readonly orgId: string; readonly projectId: string | null }, id: string): Promise<SmsMessage>;
}

/** One deliver_sm to send to a receiver/transceiver session of the token. */
export type Deliverable =
  | ({ readonly kind: 'receipt' } & ReceiptInput)
  | ({ readonly kind: 'inbound' } & Pick<InboundRecord, 'from' | 'to' | 'text'>);

/** ok: the client answered ESME_ROK; refused: it answered an error; unavailable: no session, timeout or a closed session. */
export type DeliveryResult = 'ok' | 'refused' | 'unavailable';

export interface FeedSubscription {
  stop(): Promise<void>;
}

export interface ReceiptFeed {
  /** Makes sure the token's durable feed exists, so that receipts wait while no session is bound. */
  ensure(tokenId: string): Promise<void>;
  /** Starts handing the token's receipts and inbound messages to `deliver` until stopped. */
  open(tokenId: string, deliver: (item: Deliverable) => Promise<DeliveryResult>): FeedSubscription;
}
