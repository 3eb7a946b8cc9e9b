// Activities of the message lifecycle: all its I/O, over ports (core/sms/lifecycle-ports.ts).
// Hand-off to the carrier connector and transition records go on the bus (the state by
// compare-and-set, the records for ClickHouse and the SMPP gateway); DLRs go to the token's
// webhook, signed, each attempt recorded.
import { Context } from '@temporalio/activity';
import { SUBJECTS } from '../core/bus/names';
import type { StatusPayload } from '../core/bus/payloads';
import type { CarrierSubmit } from '../core/carrier';
import type { DlrDelivery, Transition } from '../core/sms';
import type { LifecycleDeps } from './lifecycle-deps';
import { createLifecycleIo } from './lifecycle-io';

export type { LifecycleDeps } from './lifecycle-deps';


export interface LifecycleActivities {
  dispatch(messageId: string): Promise<void>;
  /**
   * Records transitions that arose together (KV state once, one JetStream message), then makes the
   * first webhook attempt of each `deliverNow` DLR in order, stopping at the first failure.
   * Returns how many were delivered. Only the recording is retried (it runs first), so a retry
   * never repeats a webhook call.
   */
  settle(tokenId: string, transitions: Transition[], deliverNow: DlrDelivery[]): Promise<number>;
  /** First attempt, run as a local activity: no retry here (the workflow falls back to deliverDlr). */
  deliverDlrOnce(delivery: DlrDelivery): Promise<void>;
  /** Retried by the server-side schedule until it succeeds or the window closes. */
  deliverDlr(delivery: DlrDelivery): Promise<void>;
  deadLetter(delivery: DlrDelivery, reason: string): Promise<void>;
  refund(messageId: string, orgId: string, micros: number): Promise<void>;
  /**
   * A scheduled message at its time (DESIGN §4 Scheduling): `send` once its state is `queued`
   * (compare-and-set from `scheduled`; a repeat finds it queued), `opted-out` when its recipient
   * opted out of its project meanwhile (the state stays `scheduled`; the workflow rejects it).
   */
  releaseScheduled(messageId: string): Promise<'send' | 'opted-out'>;
}

export function createLifecycleActivities(deps: LifecycleDeps): LifecycleActivities {
  const { readState, writeState, attemptOnce, refund } = createLifecycleIo(deps);

  /** One attempt, recorded on the bus; throws when it failed. */
  const attempt = async (delivery: DlrDelivery, number: number): Promise<void> => {
    const row = await attemptOnce(delivery, number);
    await deps.bus.publish(SUBJECTS.dlrAttempt, { attempts: [row] }, `attempt-${delivery.messageId}-${delivery.seq}-${number}`);
    if (row.outcome === 'failed') throw new Error(`DLR ${delivery.messageId}#${delivery.seq} to ${row.url ?? '?'}: ${row.error ?? 'failed'}`);
  };

  return {
    async dispatch(messageId) {
      const { message: m } = await readState(messageId);
      const submit: CarrierSubmit = {
        messageId: m.id, orgId: m.orgId, from: m.from, to: m.normalizedTo, country: m.country, text: m.deliveredText,
        encoding: m.encoding, segments: m.messagesCount, submittedAt: new Date().toISOString(),
      };
      await deps.bus.publish(SUBJECTS.carrierSubmit, submit, `submit-${m.id}`);
    },

    async settle(tokenId, transitions, deliverNow) {
      const updated = await writeState(transitions);
      const first = transitions[0]?.seq ?? 0;
      const last = transitions.at(-1)?.seq ?? 0;
      const record: StatusPayload = { messages: [updated], transitions: transitions.map((t) => ({ ...t, orgId: updated.orgId, projectId: updated.projectId, tokenId, clientId: updated.clientId })) };
      await deps.bus.publish(SUBJECTS.smsStatus(tokenId), record, `status-${updated.id}-${first}-${last}`);
      let delivered = 0;
      for (const delivery of deliverNow) {
        try {
          await attempt(delivery, 1);
        } catch {
          break;
        }
        delivered += 1;
      }
      return delivered;
    },

    deliverDlrOnce: (delivery) => attempt(delivery, 1),

    async deliverDlr(delivery) {
      // Attempt 1 was the local one; server-side retries count from there.
      await attempt(delivery, Context.current().info.attempt + 1);
    },

    async deadLetter(delivery, reason) {
      deps.log.warn({ messageId: delivery.messageId, seq: delivery.seq, reason }, 'DLR dead-lettered');
      await deps.deadLetters.put({ ...delivery, reason, failedAt: new Date().toISOString() });
    },

    async releaseScheduled(messageId) {
      for (;;) {
        const { message: m, revision } = await readState(messageId);
        if (m.status !== 'scheduled') return 'send';
        if (m.projectId && (await deps.optOuts.isOptedOut(m.projectId, m.normalizedTo))) {
          deps.log.info({ messageId, projectId: m.projectId }, 'scheduled message: the recipient opted out before its time; rejected');
          return 'opted-out';
        }
        const now = new Date().toISOString();
        if ((await deps.states.replace({ ...m, status: 'queued', updatedAt: now }, revision)) !== null) return 'send';
      }
    },

    refund,
  };
}
