// Activities of the batch lifecycle (workflows/sms-batch-lifecycle.ts): one local activity hands
// a whole batch to the carrier connector, one records and delivers a whole batch of transitions.
// The work inside each is concurrent across messages and in order within a message.
import { Context } from '@temporalio/activity';
import { SUBJECTS } from '../core/bus/names';
import type { StatusPayload, TransitionRecord } from '../core/bus/payloads';
import type { CarrierSubmit } from '../core/carrier';
import type { DlrAttempt, DlrDelivery, LifecycleOwner, SmsMessage, Transition } from '../core/sms';
import type { LifecycleDeps } from './lifecycle';
import { createLifecycleIo } from './lifecycle-io';

/** KV and bus round trips in flight at once within one activity. */
const IO_CONCURRENCY = 64;
/** Webhook deliveries (one message's DLRs in order each) in flight at once. */
export const WEBHOOK_CONCURRENCY = 100;
/** Messages per `sms.status.<token>` or attempts per `sms.dlr.attempt` stream message. */
const RECORDS_PER_PUBLISH = 200;

/** The transitions of one message that arose together, and what to do about them. */
export interface BatchSettleItem {
  readonly tokenId: string;
  /** One message's transitions, in order. */
  readonly transitions: Transition[];
  /** Their DLRs whose first attempt is due now (none while an earlier DLR of the message is retrying). */
  readonly deliverNow: DlrDelivery[];
  /** Set when the message ended in an error that never reached a carrier (refunded once). */
  readonly refund?: { readonly orgId: string; readonly micros: number };
}

export interface BatchSettled {
  /** Per item: how many of its `deliverNow` DLRs were delivered (the first ones). */
  readonly delivered: number[];
  /** Items whose first undelivered DLR was not attempted (its token's webhook had failed in this call). */
  readonly unattempted: number[];
}

export interface BatchLifecycleActivities {
  /**
   * Claims each message for `owner` and hands the ones it owns to the carrier connector; answers
   * those (a message claimed by another batch, or without state, is left out).
   */
  dispatchBatch(owner: LifecycleOwner, messageIds: string[]): Promise<string[]>;
  /**
   * Records every item's transitions (KV state, one `sms.status.<token>` message per token), makes
   * the refunds, then the first webhook attempt of each item's `deliverNow` DLRs in order, stopping
   * a message at its first failure (and skipping, for this call, a token whose webhook failed).
   * `key` names this settle (stream dedupe).
   */
  settleBatch(key: string, items: BatchSettleItem[]): Promise<BatchSettled>;
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await fn(items[i] as T, i);
  });
  await Promise.all(lanes);
  return results;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export function createBatchLifecycleActivities(deps: LifecycleDeps): BatchLifecycleActivities {
  const { readAndKeep, writeState, attemptOnce, refund } = createLifecycleIo(deps);

  const handOver = async (owner: LifecycleOwner, messageId: string): Promise<boolean> => {
    const holder = await deps.owners.claim(messageId, owner);
    if (holder.workflowId !== owner.workflowId || holder.runId !== owner.runId) {
      deps.log.warn({ messageId, owner: holder.workflowId }, 'message already held by another lifecycle; left out of this batch');
      return false;
    }
    const state = await readAndKeep(messageId);
    if (!state) {
      deps.log.warn({ messageId }, 'message has no state in KV (expired?); left out of this batch');
      return false;
    }
    const m = state.message;
    // Handed over already: this is a repeat (the workflow task that recorded it timed out) and the
    // carrier acknowledged it; the stream's msgID dedupe covers only a 2-minute window.
    if (m.status !== 'queued') return true;
    const submit: CarrierSubmit = {
      messageId: m.id, orgId: m.orgId, from: m.from, to: m.normalizedTo, country: m.country, text: m.deliveredText,
      encoding: m.encoding, segments: m.messagesCount, submittedAt: new Date().toISOString(),
    };
    await deps.bus.publish(SUBJECTS.carrierSubmit, submit, `submit-${m.id}`);
    return true;
  };

  const record = async (key: string, items: readonly BatchSettleItem[], states: readonly SmsMessage[]): Promise<void> => {
    const byToken = new Map<string, { messages: SmsMessage[]; transitions: TransitionRecord[] }>();
    items.forEach((item, i) => {
      const updated = states[i] as SmsMessage;
      const group = byToken.get(item.tokenId) ?? { messages: [], transitions: [] };
      byToken.set(item.tokenId, group);
      group.messages.push(updated);
      for (const t of item.transitions) group.transitions.push({ ...t, orgId: updated.orgId, projectId: updated.projectId, tokenId: item.tokenId, clientId: updated.clientId });
    });
    await Promise.all([...byToken.entries()].flatMap(([tokenId, group]) => chunks(group.messages, RECORDS_PER_PUBLISH).map((messages, n) => {
      const ids = new Set(messages.map((m) => m.id));
      const payload: StatusPayload = { messages, transitions: group.transitions.filter((t) => ids.has(t.messageId)) };
      return deps.bus.publish(SUBJECTS.smsStatus(tokenId), payload, `status-${key}-${tokenId}-${n}`);
    })));
  };

  return {
    async dispatchBatch(owner, messageIds) {
      const handed = await mapLimit(messageIds, IO_CONCURRENCY, (id) => handOver(owner, id));
      return messageIds.filter((_, i) => handed[i]);
    },

    async settleBatch(key, items) {
      const states = await mapLimit(items, IO_CONCURRENCY, (item) => writeState(item.transitions));
      await record(key, items, states);
      await mapLimit(items.filter((i) => i.refund), IO_CONCURRENCY, (item) => refund(item.transitions[0]?.messageId ?? '', item.refund?.orgId ?? '', item.refund?.micros ?? 0));
      const failedTokens = new Set<string>();
      const rows: DlrAttempt[] = [];
      const unattempted: number[] = [];
      const delivered = await mapLimit(items, WEBHOOK_CONCURRENCY, async (item, index) => {
        let count = 0;
        for (const delivery of item.deliverNow) {
          if (failedTokens.has(item.tokenId)) {
            unattempted.push(index);
            break;
          }
          const row = await attemptOnce(delivery, 1);
          rows.push(row);
          if (row.outcome === 'failed') {
            failedTokens.add(item.tokenId);
            break;
          }
          count += 1;
        }
        return count;
      });
      const attempt = Context.current().info.attempt;
      await Promise.all(chunks(rows, RECORDS_PER_PUBLISH).map((attempts, n) => deps.bus.publish(SUBJECTS.dlrAttempt, { attempts }, `attempts-${key}-${attempt}-${n}`)));
      return { delivered, unattempted: unattempted.sort((a, b) => a - b) };
    },
  };
}
