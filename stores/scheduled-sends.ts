// The ScheduledSends port over the Temporal client: a cancel is the cancelScheduled update of the
// message's smsScheduled workflow (sms-<id>), with one update id per message, so a repeated
// cancel gets the first one's answer (core/bus/temporal.ts).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { UPDATE_IDS, UPDATES, WORKFLOW_IDS, type CancelScheduledOutcome } from '../core/bus/temporal';
import { AppError } from '../core/errors';
import type { ScheduledCancelAnswer, ScheduledSends } from '../core/sms';

/** A worker that does not take the update within this long: 503 (the update stays admitted until it does). */
const UPDATE_TIMEOUT_MS = 15_000;

export class TemporalScheduledSends implements ScheduledSends {
  constructor(private readonly client: Client) {}

  async cancel(messageId: string): Promise<ScheduledCancelAnswer> {
    const handle = this.client.workflow.getHandle(WORKFLOW_IDS.lifecycle(messageId));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new AppError('ENGINE_UNAVAILABLE', `the lifecycle worker did not take the cancel of message ${messageId} within ${UPDATE_TIMEOUT_MS / 1000} s; retry`)), UPDATE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([handle.executeUpdate<CancelScheduledOutcome, []>(UPDATES.cancelScheduled, { updateId: UPDATE_IDS.cancel(messageId), args: [] }), timeout]);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return { canceled: false, absent: true };
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}
