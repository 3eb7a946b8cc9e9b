// The customer SMPP server's settings, dependencies and the shapes its parts share: what a
// bound session is (Binding) and what every session may use of the server (ServerContext).
import type { Organization, Token } from '../../core/accounts';
import type { Logger } from '../../infra/logger';
import type { BulkAcceptance } from './batcher';
import type { BindClock, BindThrottleOptions } from './bind-throttle';
import type { MessageReader, ReceiptFeed, ScheduledCanceler, SmppDirectory } from './ports';

export type BindMode = 'transmitter' | 'receiver' | 'transceiver';

export interface SmppOptions extends BindThrottleOptions {
  /** Address to listen on. */
  readonly host: string;
  /** system_id this server names itself with in bind responses. */
  readonly serverSystemId: string;
  /** Bound sessions per system_id (in this process); one more is refused with ESME_RBINDFAIL. */
  readonly maxSessionsPerSystemId: number;
  /** submit_sm / query_sm being processed per session; one more is answered ESME_RTHROTTLED. */
  readonly window: number;
  /** submit_sm per second per session (token bucket); beyond, ESME_RTHROTTLED. */
  readonly maxSubmitsPerSecond: number;
  /** Burst of the token bucket; default one second's worth. */
  readonly submitBurst: number | undefined;
  /** No PDU from the client for this long: the server unbinds and closes. */
  readonly idleTimeoutMs: number;
  /** A connection that has not bound by then is closed. */
  readonly bindTimeoutMs: number;
  /** How long the parts of a concatenated message are waited for. */
  readonly concatTimeoutMs: number;
  /** Parts held per session while their messages are incomplete; beyond, ESME_RMSGQFUL. */
  readonly maxHeldParts: number;
  /** How long a deliver_sm waits for its deliver_sm_resp. */
  readonly deliverTimeoutMs: number;
  /** deliver_sm awaiting their response per session. */
  readonly deliverWindow: number;
  /** How often sessions are checked against the directory (revocation) and for idleness. */
  readonly watchIntervalMs: number;
  /** Longest PDU accepted (message_payload included); a longer command_length closes the connection. */
  readonly maxPduLength: number;
}

export const DEFAULT_SMPP_OPTIONS: SmppOptions = {
  host: '0.0.0.0',
  serverSystemId: 'SMSPLATFORM',
  maxSessionsPerSystemId: 10,
  window: 100,
  maxSubmitsPerSecond: 10_000,
  submitBurst: undefined,
  idleTimeoutMs: 120_000,
  bindTimeoutMs: 30_000,
  concatTimeoutMs: 60_000,
  maxHeldParts: 1000,
  deliverTimeoutMs: 10_000,
  deliverWindow: 100,
  watchIntervalMs: 1000,
  maxPduLength: 16_384,
  bindFailureWindowMs: 60_000,
  maxBindFailuresPerSystemId: 5,
  maxBindFailuresPerAddress: 20,
  bindLockoutMs: 300_000,
  bindRefusalDelayMs: 1000,
};

export interface SmppServerDeps {
  readonly directory: SmppDirectory;
  readonly acceptance: BulkAcceptance;
  readonly states: MessageReader;
  /** cancel_sm of scheduled messages; without it cancel_sm is ESME_RINVCMDID. */
  readonly scheduled?: ScheduledCanceler;
  readonly receipts: ReceiptFeed;
  readonly log: Logger;
  /** Time for the failed-bind throttle (tests drive it); the system clock by default. */
  readonly clock?: BindClock;
}

export interface SmppServer {
  readonly port: number;
  /** Bound sessions by system_id (for tests and /health-like reporting). */
  sessions(systemId?: string): number;
  /** Parts of concatenated messages held until their message is complete (read-only, for tests). */
  heldParts(): number;
  stop(): Promise<void>;
}

export interface Binding {
  readonly mode: BindMode;
  readonly systemId: string;
  readonly token: Token;
  readonly org: Organization;
  /** The password hash the bind was checked against: a re-issued password ends the session. */
  readonly passwordHash: string;
  readonly version: number;
}

/** How long an unbind waits for the submits in flight (ours) or for unbind_resp (theirs). */
export const UNBIND_WAIT_MS = 2000;
