// Canceling a scheduled message (DESIGN §4 Scheduling): one core function that the HTTP API
// (POST /transactional/v1/sms/{id}/cancel), SMPP cancel_sm and the console call. The message
// waits in its smsScheduled workflow; the workflow decides, in its history's order, whether the
// cancel came before its timer (canceled: `canceled` transition and DLR, charge refunded) or
// after (it left: 409). The state in KV answers what is already decided without asking Temporal.
import { AppError } from '../errors';
import type { SmsMessage } from './message';
import type { MessageStates } from './ports';

/** What the message's scheduled workflow answered a cancel; `absent`: no such workflow (yet, or any more). */
export type ScheduledCancelAnswer = { readonly canceled: true } | { readonly canceled: false; readonly status: string } | { readonly canceled: false; readonly absent: true };

/** The port to the scheduled workflows (stores/scheduled-sends.ts, over the Temporal client). */
export interface ScheduledSends {
  cancel(messageId: string): Promise<ScheduledCancelAnswer>;
}

/** Who asks: an organization, and the project of an api_sms token (null: account-wide). */
export interface CancelScope {
  readonly orgId: string;
  readonly projectId: string | null;
}

export interface ScheduleCancelDeps {
  readonly states: Pick<MessageStates, 'get'>;
  readonly scheduled: ScheduledSends;
  /** How long a cancel waits for the workflow of a message accepted a moment ago (the starter's lag). */
  readonly startWaitMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

const START_WAIT_MS = 5_000;
const START_POLL_MS = 100;

function visible(scope: CancelScope, m: SmsMessage): boolean {
  return m.orgId === scope.orgId && (scope.projectId === null || m.projectId === scope.projectId);
}

function alreadyLeft(m: SmsMessage): AppError {
  const what = m.status === 'canceled' ? 'it was canceled already' : `it already left (status ${m.status}${m.scheduledAt ? `, scheduled for ${m.scheduledAt}` : ', it was not scheduled'})`;
  return new AppError('ALREADY_LEFT', `message ${m.id} can no longer be canceled: ${what}`);
}

export class ScheduledCancel {
  constructor(private readonly deps: ScheduleCancelDeps) {}

  /**
   * Cancels a scheduled message: the message, now `canceled` (refunded, a `canceled` DLR on its
   * way). NOT_FOUND for an unknown id or another organization's (or project's) message,
   * ALREADY_LEFT once it is no longer `scheduled`.
   */
  async cancel(scope: CancelScope, id: string): Promise<SmsMessage> {
    const sleep = this.deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    const deadline = Date.now() + (this.deps.startWaitMs ?? START_WAIT_MS);
    for (;;) {
      const message = await this.deps.states.get(id);
      if (!message || !visible(scope, message)) throw new AppError('NOT_FOUND', `message ${id} does not exist or is not visible to this token`);
      if (message.status !== 'scheduled') throw alreadyLeft(message);
      const answer = await this.deps.scheduled.cancel(id);
      if (answer.canceled) {
        // The workflow answers once the canceled state is written.
        const canceled = await this.deps.states.get(id);
        return canceled && canceled.status === 'canceled' ? canceled : { ...message, status: 'canceled', statusCode: 0 };
      }
      if (!('absent' in answer)) throw alreadyLeft({ ...message, status: answer.status as SmsMessage['status'] });
      // No workflow: accepted a moment ago (the starter has not started it yet), or finished.
      if (Date.now() >= deadline) {
        throw new AppError('ENGINE_UNAVAILABLE', `the timer of scheduled message ${id} is not registered yet (the lifecycle worker is behind or down); retry shortly`);
      }
      await sleep(START_POLL_MS);
    }
  }
}
