// Coalesces the submit_sm of one token that arrive together into one call of the acceptance
// core (SmsAcceptance.submitBulk: each item validated and priced on its own, one balance
// charge, one JetStream publish), so a pipelining client costs a few JetStream writes per
// batch instead of per message (DESIGN §3a). At low load every submit goes alone, at once.
// A batch refused as a whole for funds is retried item by item, so each message is judged on
// its own, exactly as if it had been submitted alone.
import type { Accepted, ReceiptRequest, SmsMessage, Submitter } from '../../core/sms';
import { isAppError } from '../../core/errors';
import { describeFields, statusForError, statusForFields } from './submit';

export interface SmsItem {
  readonly from: string;
  readonly to: string;
  readonly text: string;
  readonly allowUnicode: boolean;
  /** validity_period as seconds (an item field of the acceptance core, DESIGN §4 Scheduling). */
  readonly validityPeriod?: number;
  /** schedule_delivery_time as ISO 8601 UTC (the item's scheduledAt, DESIGN §4 Scheduling). */
  readonly scheduledAt?: string;
  /** The receipts the submit_sm asked for; accepted messages carry it (receipts need no side record). */
  readonly receipt?: ReceiptRequest;
}

export interface BulkAcceptance {
  submitBulk(submitter: Submitter, body: unknown, receipts?: ReadonlyArray<ReceiptRequest | undefined>): Promise<Accepted>;
}

export type SubmitOutcome =
  | { readonly ok: true; readonly message: SmsMessage }
  | { readonly ok: false; readonly status: number; readonly reason: string };

interface Job {
  readonly submitter: Submitter;
  readonly item: SmsItem;
  readonly resolve: (outcome: SubmitOutcome) => void;
}

interface Lane {
  queue: Job[];
  running: number;
  scheduled: boolean;
}

export interface BatcherOptions {
  /** Items per acceptance call (the core takes at most 100). */
  readonly maxItems: number;
  /** Acceptance calls in flight per token. */
  readonly concurrency: number;
}

export class SubmitBatcher {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly acceptance: BulkAcceptance, private readonly options: BatcherOptions) {}

  submit(submitter: Submitter, item: SmsItem): Promise<SubmitOutcome> {
    return new Promise((resolve) => {
      const key = submitter.tokenId;
      let lane = this.lanes.get(key);
      if (!lane) {
        lane = { queue: [], running: 0, scheduled: false };
        this.lanes.set(key, lane);
      }
      lane.queue.push({ submitter, item, resolve });
      this.schedule(key, lane);
    });
  }

  private schedule(key: string, lane: Lane): void {
    if (lane.scheduled || lane.running >= this.options.concurrency || lane.queue.length === 0) return;
    lane.scheduled = true;
    // Let the submits already read from the sockets in this turn join the batch.
    setImmediate(() => {
      lane.scheduled = false;
      while (lane.running < this.options.concurrency && lane.queue.length > 0) {
        const jobs = lane.queue.splice(0, this.options.maxItems);
        lane.running++;
        void this.run(jobs).finally(() => {
          lane.running--;
          if (lane.running === 0 && lane.queue.length === 0) this.lanes.delete(key);
          else this.schedule(key, lane);
        });
      }
    });
  }

  private async run(jobs: readonly Job[]): Promise<void> {
    const first = jobs[0];
    if (!first) return;
    try {
      const items = jobs.map(({ item: { receipt: _receipt, ...item } }) => item);
      const result = await this.acceptance.submitBulk(first.submitter, items, jobs.map((j) => j.item.receipt));
      const errors = new Map(result.errors.map((e) => [e.index, e]));
      let next = 0;
      jobs.forEach((job, index) => {
        const error = errors.get(index);
        if (error) {
          job.resolve({ ok: false, status: statusForFields(error.fields), reason: describeFields(error.fields) });
          return;
        }
        const message = result.entities[next++];
        job.resolve(message ? { ok: true, message } : { ok: false, status: statusForError(undefined), reason: 'no outcome for the item' });
      });
    } catch (err) {
      if (jobs.length > 1 && isAppError(err) && err.code === 'INSUFFICIENT_FUNDS') {
        await Promise.all(jobs.map((job) => this.run([job])));
        return;
      }
      const status = statusForError(err);
      const reason = err instanceof Error ? err.message : String(err);
      for (const job of jobs) job.resolve({ ok: false, status, reason });
    }
  }
}
