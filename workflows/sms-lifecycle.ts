// One workflow per accepted message (workflow id `sms-<message id>`): hands the message to the
// carrier connector, applies the carrier's reports (signals) to the state machine, records each
// transition and delivers it as a DLR in per-message order, and ends at a final status or, with
// no final report within the validity period, as expired (code 1). docs/lifecycle.md.
// smsScheduled is the same lifecycle behind a durable timer until the message's scheduledAt
// (DESIGN §4 Scheduling): the cancelScheduled update ends it as `canceled` (refunded) while it
// waits; at its time an opted-out recipient ends it as `rejected` (refunded).
import { allHandlersFinished, condition, defineQuery, defineSignal, defineUpdate, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { LifecycleActivities } from '../activities/lifecycle';
import { QUERIES, SIGNALS, UPDATES, WORKFLOW_IDS, type CancelScheduledOutcome } from '../core/bus/temporal';
import type { CarrierEvent } from '../core/carrier/types';
import { aggregate, applyEvent, CODE_BLOCKED_SUBSCRIBER, CODE_OK, CODE_UNKNOWN, initialState, isFinal, refundable, transitionsBetween } from '../core/sms/lifecycle-rules';
import type { MessageStatus } from '../core/sms/message';
import { deliverWithRetries } from './deliver';
import { LOCAL_WRITE, settleOptions, type WebhookSchedule } from './presets';
import type { DlrDelivery, LifecycleInput, Transition } from './types';

/** One event, or all the events of one message the router fetched together (fewer workflow tasks). */
export const carrierEventSignal = defineSignal<[CarrierEvent | CarrierEvent[]]>(SIGNALS.carrierEvent);
export const statusQuery = defineQuery<{ status: MessageStatus; code: number | null; pendingDlrs: number }>(QUERIES.status);

export const lifecycleWorkflowId = WORKFLOW_IDS.lifecycle;
/** Cancels a scheduled message still waiting (core/bus/temporal.ts UPDATES.cancelScheduled). */
export const cancelScheduledUpdate = defineUpdate<CancelScheduledOutcome>(UPDATES.cancelScheduled);

interface PendingDlr {
  readonly delivery: DlrDelivery;
  /** Its first attempt was made (and failed) while its transition was recorded. */
  readonly attempted: boolean;
}

type Lifecycle = LifecycleInput & { webhook: WebhookSchedule };
type Outcome = { status: MessageStatus; code: number | null };

export function smsLifecycle(input: Lifecycle): Promise<Outcome> {
  return lifecycle(input);
}

/** A scheduled message: the per-message lifecycle after its timer (input.scheduledAt). */
export function smsScheduled(input: Lifecycle & { scheduledAt: string }): Promise<Outcome> {
  return lifecycle(input);
}

async function lifecycle(input: Lifecycle): Promise<Outcome> {
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

  if (input.scheduledAt !== undefined) {
    // Waits until scheduledAt on a durable timer; the update decides, in history order, whether a
    // cancel came first (canceled) or the timer did (left: the caller answers 409).
    let waiting = true;
    let cancelRequested = false;
    let cancelRecorded = false;
    setHandler(cancelScheduledUpdate, async (): Promise<CancelScheduledOutcome> => {
      if (!waiting) return { canceled: false, status: current.status };
      cancelRequested = true;
      await condition(() => cancelRecorded);
      return { canceled: true };
    });
    const wait = Date.parse(input.scheduledAt) - Date.now();
    if (wait > 0) await condition(() => cancelRequested, wait);
    waiting = false;
    // At its time: moved to `queued` unless its recipient opted out meanwhile.
    const release = cancelRequested ? 'canceled' : await writes.releaseScheduled(input.messageId);
    if (release !== 'send') {
      await settle([release === 'canceled' ? { status: 'canceled', code: CODE_OK } : { status: 'rejected', code: CODE_BLOCKED_SUBSCRIBER }]);
      await writes.refund(input.messageId, input.orgId, input.chargedMicros);
      cancelRecorded = true;
      finished = true;
      await retries;
      await condition(allHandlersFinished);
      if (deliveryError !== undefined) throw deliveryError;
      return current;
    }
  }

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
