// One workflow per accepted message (workflow id `sms-<message id>`): hands the message to the
// carrier connector, applies the carrier's reports (signals) to the state machine, records each
// transition and delivers it as a DLR in per-message order, and ends at a final status or, with
// no final report within the validity period, as expired (code 1). docs/lifecycle.md.
import { condition, defineQuery, defineSignal, proxyLocalActivities, setHandler, sleep } from '@temporalio/workflow';
import type { LifecycleActivities } from '../activities/lifecycle';
import type { CarrierEvent } from '../core/carrier/types';
import { aggregate, applyEvent, CODE_UNKNOWN, initialState, isFinal, refundable, transitionsBetween } from '../core/sms/lifecycle-rules';
import type { MessageStatus } from '../core/sms/message';
import { deliverWithRetries } from './deliver';
import { LOCAL_WRITE, type WebhookSchedule } from './presets';
import type { DlrDelivery, LifecycleInput, Transition } from './types';

/** One event, or all the events of one message the router fetched together (fewer workflow tasks). */
export const carrierEventSignal = defineSignal<[CarrierEvent | CarrierEvent[]]>('carrierEvent');
export const statusQuery = defineQuery<{ status: MessageStatus; code: number | null; pendingDlrs: number }>('status');

export const lifecycleWorkflowId = (messageId: string): string => `sms-${messageId}`;

export async function smsLifecycle(input: LifecycleInput & { webhook: WebhookSchedule }): Promise<{ status: MessageStatus; code: number | null }> {
  const writes = proxyLocalActivities<LifecycleActivities>(LOCAL_WRITE);
  let state = initialState(input.segments);
  let current = aggregate(state);
  let seq = 0;
  let timedOut = false;
  let finished = false;
  const inbox: CarrierEvent[] = [];
  const outbox: DlrDelivery[] = [];
  setHandler(carrierEventSignal, (events) => { inbox.push(...(Array.isArray(events) ? events : [events])); });
  setHandler(statusQuery, () => ({ status: current.status, code: current.code, pendingDlrs: outbox.length }));

  const transition = async (status: MessageStatus, code: number): Promise<void> => {
    seq += 1;
    current = { status, code };
    const t: Transition = { messageId: input.messageId, seq, status, code, eventAt: new Date().toISOString() };
    await writes.recordTransition(input.tokenId, t);
    if (input.webhooks) {
      outbox.push({ tokenId: input.tokenId, messageId: input.messageId, seq, payload: { id: input.messageId, ...(input.clientId ? { clientId: input.clientId } : {}), status, code, eventAt: t.eventAt } });
    }
  };

  const deliverInOrder = async (): Promise<void> => {
    for (;;) {
      await condition(() => outbox.length > 0 || finished);
      const next = outbox[0];
      if (!next) return;
      await deliverWithRetries(next, input.webhook);
      outbox.shift();
    }
  };
  // Observed from the start: a rejection must fail the workflow visibly, not as an unhandled
  // rejection that fails (and retries) every workflow task.
  let deliveryError: unknown;
  const deliveries = deliverInOrder().catch((err: unknown) => { deliveryError = err; });

  await writes.dispatch(input.messageId);
  void sleep(input.validityMs).then(() => { timedOut = true; });
  while (!isFinal(current.status)) {
    await condition(() => inbox.length > 0 || timedOut);
    if (inbox.length === 0) {
      await transition('expired', CODE_UNKNOWN);
      break;
    }
    for (const event of inbox.splice(0)) {
      state = applyEvent(state, event);
      const next = aggregate(state);
      for (const status of transitionsBetween(current.status, next.status)) await transition(status, status === next.status ? next.code ?? 0 : 0);
    }
  }
  if (refundable(state)) await writes.refund(input.messageId, input.orgId, input.chargedMicros);
  finished = true;
  await deliveries;
  if (deliveryError !== undefined) throw deliveryError;
  return current;
}
