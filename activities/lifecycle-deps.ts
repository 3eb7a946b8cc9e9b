// The ports the lifecycle activities take (roles/worker.ts hands in the adapters).
import type { EventBus } from '../core/bus/ports';
import type { DeadLetters, LifecycleOwners, LifecycleStates, OnceKeys, TokenDirectory, WebhookSender } from '../core/sms/lifecycle-ports';
import type { Funds, OptOuts } from '../core/sms/ports';

export interface LifecycleDeps {
  readonly states: LifecycleStates;
  readonly bus: EventBus;
  readonly webhooks: WebhookSender;
  readonly deadLetters: DeadLetters;
  /** Makes a retried refund a no-op. */
  readonly once: OnceKeys;
  readonly tokens: TokenDirectory;
  /** Which batch lifecycle holds each message. */
  readonly owners: LifecycleOwners;
  readonly funds: Pick<Funds, 'credit'>;
  /** Whether a scheduled message's recipient opted out before its time (releaseScheduled). */
  readonly optOuts: OptOuts;
  readonly webhookTimeoutMs: number;
  readonly log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
}
