// One workflow per accepted message (workflow id `sms-<message id>`): hands the message to the
// carrier connector, applies the carrier's reports (signals) to the state machine, records each
// transition and delivers it as a DLR in per-message order, and ends at a final status or, with
// no final report within the validity period, as expired (code 1). docs/lifecycle.md.
import { condition, defineQuery, defineSignal, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { LifecycleActivities } from '../activities/lifecycle';
import { QUERIES, SIGNALS, WORKFLOW_IDS } from '../core/bus/temporal';
import type { CarrierEvent } from '../core/carrier/types';
import { aggregate, applyEvent, CODE_UNKNOWN, initialState, isFinal, refundable, transitionsBetween } from '../core/sms/lifecycle-rules';
import type { MessageStatus } from '../core/sms/message';
import { deliverWithRetries } from './deliver';
import { LOCAL_WRITE, settleOptions, type WebhookSchedule } from './presets';
import type { DlrDelivery, LifecycleInput, Transition } from './types';

/** One event, or all the events of one message the router fetched together (fewer workflow tasks). */
export const carrierEventSignal = defineSignal<[CarrierEvent | CarrierEvent[]]>(SIGNALS.carrierEvent);
export const statusQuery = defineQuery<{ status: MessageStatus; code: number | null; pendingDlrs: number }>(QUERIES.status);

export const lifecycleWorkflowId = WORKFLOW_IDS.lifecycle;

interface PendingDlr {
  readonly delivery: DlrDelivery;
  /** Its first attempt was made (and failed) while its transition was recorded. */
  readonly attempted: boolean;
}

export async function smsLifecycle(input: LifecycleInput & { webhook: WebhookSchedule }): Promise<{ status: MessageStatus; code: number | null }> {
  const writes = proxyLocalActivities<LifecycleActivities>(LOCAL_WRITE);
  let state = initialState(input.segments);
  let current = aggregate(state);
  let seq = 0;
  let timedOut = false;
  let finished = false;
  const inbox: CarrierEvent[] = [];
  // DLRs not delivered by `settle`, in order: the first attempt failed or an earlier one is still retrying.
  const pending: PendingDlr[] = [];
  setHandler(carrierEventSignal, (events) => { inbox.push(...(Array.isArray(events) ? events : [events])); });
  setHandler(statusQuery, () => ({ status: current.status, code: current.code, pendingDlrs: pending.length }));

  /** Records transitions that arose together and, unless earlier DLRs are pending, delivers them. */
  const settle = async (changes: ReadonlyArray<{ status: MessageStatus; code: number }>): Promise<void> => {
    const eventAt = new Date().toISOString();
    const transitions: Transition[] = changes.map((c) => ({ messageId: input.messageId, seq: ++seq, status: c.status, code: c.code, eventAt }));
    current = changes[changes.length - 1] ?? current;
    const deliveries: DlrDelivery[] = input.webhooks
      ? transitions.map((t) => ({ tokenId: input.tokenId, messageId: input.messageId, seq: t.seq, payload: { id: input.messageId, ...(input.clientId ? { clientId: input.clientId } : {}), status: t.status, code: t.code, eventAt } }))
      : [];
    const deliverNow = pending.length === 0 ? deliveries : [];
    const delivered = await proxyLocalActivities<LifecycleActivities>(settleOptions(input.webhook, deliverNow.length)).settle(input.tokenId, transitions, deliverNow);
    deliveries.slice(delivered).forEach((delivery, i) => pending.push({ delivery, attempted: i === 0 && deliverNow.length > 0 }));
  };

  const retryPending = async (): Promise<void> => {
    for (;;) {
      await condition(() => pending.length > 0 || finished);
      const next = pending[0];
      if (!next) return;
      await deliverWithRetries(next.delivery, input.webhook, next.attempted);
      pending.shift();
    }
  };
  // Observed from the start: a rejection must fail the workflow visibly, not as an unhandled
  // rejection that fails (and retries) every workflow task.
  let deliveryError: unknown;
  const retries = retryPending().catch((err: unknown) => { deliveryError = err; });

  await writes.dispatch(input.messageId);
  // One timer for the whole validity period, never cancelled. `condition(pred, validityMs)`
  // would cancel it when the message ends early: one more history event per message, and a
  // command the recorded histories (test/fixtures/histories) and running workflows lack.
  void sleep(input.validityMs).then(() => { timedOut = true; });
  while (!isFinal(current.status)) {
    await condition(() => inbox.length > 0 || timedOut);
    if (inbox.length === 0) {
      await settle([{ status: 'expired', code: CODE_UNKNOWN }]);
      break;
    }
    const changes: Array<{ status: MessageStatus; code: number }> = [];
    let reached = current.status;
    for (const event of inbox.splice(0)) {
      state = applyEvent(state, event);
      const next = aggregate(state);
      for (const status of transitionsBetween(reached, next.status)) changes.push({ status, code: status === next.status ? next.code ?? 0 : 0 });
      reached = next.status;
    }
    if (changes.length > 0) await settle(changes);
  }
  if (refundable(state)) await writes.refund(input.messageId, input.orgId, input.chargedMicros);
  finished = true;
  await retries;
  if (deliveryError !== undefined) throw deliveryError;
  return current;
}
