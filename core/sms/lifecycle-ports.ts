// What the lifecycle activities need from the outside world, as interfaces (STYLE: activities
// are factories over ports). The NATS and HTTP implementations live in stores/ and infra/;
// tests hand in memory ones.
import type { Token } from '../accounts/types';
import type { DeadDlr } from './dlr';
import type { SmsMessage } from './message';

/** A message's current state and the revision it was read at, for compare-and-set. */
export interface VersionedMessage {
  readonly message: SmsMessage;
  readonly revision: number;
}

export interface LifecycleStates {
  read(messageId: string): Promise<VersionedMessage | null>;
  /** Writes `message` if its state is still at `revision`: its new revision, or null when a concurrent write came first. */
  replace(message: SmsMessage, revision: number): Promise<number | null>;
}

export interface WebhookRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

export interface WebhookSender {
  /** The HTTP status of the answer; rejects when there is none (an error named TimeoutError after `timeoutMs`). */
  post(request: WebhookRequest): Promise<number>;
}

export interface DeadLetters {
  put(dead: DeadDlr): Promise<void>;
}

/** Keys that can be claimed once: the first claim wins, later ones get false (idempotent side effects). */
export interface OnceKeys {
  claim(key: string, value: string): Promise<boolean>;
  /** Whether the key has been claimed. */
  has(key: string): Promise<boolean>;
}

export interface TokenDirectory {
  token(id: string): Token | undefined;
}

/** The batch lifecycle (workflow id and its first run's id) that holds a message. */
export interface LifecycleOwner {
  readonly workflowId: string;
  readonly runId: string;
}

/**
 * Which batch lifecycle owns each message. A batch claims its messages before handing them to
 * the carrier; the first claim wins, so a message fetched again into another batch (the
 * starter crashed before its ack) is handed over once.
 */
export interface LifecycleOwners {
  /** Claims `messageId` for `owner`; answers the owner that holds it (`owner`, or an earlier one). */
  claim(messageId: string, owner: LifecycleOwner): Promise<LifecycleOwner>;
  /** The owner of a message, or null when it has none (a per-message lifecycle, or unknown). */
  find(messageId: string): Promise<LifecycleOwner | null>;
}
