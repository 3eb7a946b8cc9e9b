// The ports the lifecycle activities take (roles/worker.ts hands in the adapters).
import type { EventBus } from '../core/bus/ports';
import type { DeadLetters, LifecycleOwners, LifecycleStates, OnceKeys, OptOuts, RefundLedger, TokenDirectory, WebhookSender } from '../core/sms';

export interface LifecycleDeps {
  readonly states: LifecycleStates;
  readonly bus: EventBus;
  readonly webhooks: WebhookSender;
  readonly deadLetters: DeadLetters;
  /** Refund done-markers: with the ledger's refund keys, a retried refund credits nothing (core/sms/refund.ts). */
  readonly once: OnceKeys;
  readonly tokens: TokenDirectory;
  /** Which batch lifecycle holds each message. */
  readonly owners: LifecycleOwners;
  readonly funds: RefundLedger;
  /** Whether a scheduled message's recipient opted out before its time (releaseScheduled). */
  readonly optOuts: OptOuts;
  readonly webhookTimeoutMs: number;
  readonly log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
}
