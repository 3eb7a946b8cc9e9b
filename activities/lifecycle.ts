// Activities of the message lifecycle: all its I/O. Hand-off to the carrier connector and
// transition records go through NATS (KV state + JetStream for ClickHouse and the SMPP
// gateway); DLRs go to the token's webhook, signed, each attempt recorded.
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { CarrierSubmit } from '../core/carrier/types';
import type { SmsMessage } from '../core/sms/message';
import { ATTEMPT_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, WEBHOOK_ID_HEADER, signWebhook } from '../core/sms/webhook-signature';
import { decode } from '../core/bus/decode';
import { KV_KEYS, SUBJECTS } from '../core/bus/names';
import type { DlrAttempt, DlrDelivery, Transition } from '../core/sms/dlr';
import { isRevisionConflict } from '../infra/nats';
import type { Logger } from '../infra/logger';
import type { AccountDirectory } from '../stores/account-directory';
import type { BalanceLedger } from '../stores/balance-ledger';
import { progressRank } from '../core/sms/lifecycle-rules';

export interface LifecycleDeps {
  readonly js: JetStreamClient;
  readonly messages: KV;
  readonly idempotency: KV;
  readonly deadDlrs: KV;
  readonly directory: AccountDirectory;
  readonly balances: BalanceLedger;
  readonly webhookTimeoutMs: number;
  readonly log: Logger;
}

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
}

export function createLifecycleActivities(deps: LifecycleDeps): LifecycleActivities {
  const readState = async (id: string): Promise<{ message: SmsMessage; revision: number }> => {
    const entry = await deps.messages.get(KV_KEYS.messageState(id));
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) {
      throw ApplicationFailure.nonRetryable(`message ${id} has no state in KV (expired?)`, 'MessageStateMissing');
    }
    return { message: decode('messageState', entry.value), revision: entry.revision };
  };

  /**
   * The message's KV state after `transitions`, written by compare-and-set and never backwards: a
   * late write from an abandoned attempt of an earlier settle (its local activity timed out while
   * NATS was unreachable, and the retry went ahead) must not overwrite a later status.
   */
  const writeState = async (transitions: readonly Transition[]): Promise<SmsMessage> => {
    const id = transitions[0]?.messageId ?? '';
    for (;;) {
      const { message: stored, revision } = await readState(id);
      let updated = stored;
      for (const t of transitions) {
        updated = {
          ...updated,
          status: t.status,
          statusCode: t.code,
          sentAt: t.status === 'sent' ? t.eventAt : updated.sentAt,
          deliveredAt: t.status === 'delivered' ? t.eventAt : updated.deliveredAt,
          updatedAt: t.eventAt,
        };
      }
      if (progressRank(stored.status) > progressRank(updated.status)) return updated;
      try {
        await deps.messages.update(KV_KEYS.messageState(id), JSON.stringify(updated), revision);
        return updated;
      } catch (err) {
        if (!isRevisionConflict(err)) throw err;
      }
    }
  };

  const attempt = async (delivery: DlrDelivery, number: number): Promise<void> => {
    const token = deps.directory.token(delivery.tokenId);
    const webhook = token && !token.revokedAt ? token.webhook : null;
    const orgId = token?.orgId ?? '';
    const record = async (fields: Pick<DlrAttempt, 'outcome' | 'responseStatus' | 'latencyMs' | 'error' | 'url'>): Promise<void> => {
      const row: DlrAttempt = { messageId: delivery.messageId, orgId, tokenId: delivery.tokenId, seq: delivery.seq, status: delivery.payload.status, attempt: number, at: new Date().toISOString(), ...fields };
      await deps.js.publish(SUBJECTS.dlrAttempt, JSON.stringify({ attempts: [row] }), { msgID: `attempt-${delivery.messageId}-${delivery.seq}-${number}` });
    };
    if (!webhook) {
      await record({ outcome: 'skipped', responseStatus: null, latencyMs: 0, error: token ? 'no webhook configured' : 'token revoked or unknown', url: null });
      return;
    }
    const body = JSON.stringify(delivery.payload);
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    let responseStatus: number | null = null;
    let error: string | null = null;
    try {
      const res = await fetch(webhook.url, {
        method: 'POST',
        body,
        signal: AbortSignal.timeout(deps.webhookTimeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'sms-platform-dlr/1',
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(webhook.secret, timestamp, body),
          [WEBHOOK_ID_HEADER]: `${delivery.messageId}.${delivery.seq}`,
          [ATTEMPT_HEADER]: String(number),
        },
      });
      responseStatus = res.status;
      await res.arrayBuffer().catch(() => undefined);
      if (res.status < 200 || res.status >= 300) error = `webhook answered ${res.status}`;
    } catch (err) {
      error = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${deps.webhookTimeoutMs} ms` : err.message) : String(err);
    }
    const latencyMs = Math.round(performance.now() - started);
    await record({ outcome: error ? 'failed' : 'delivered', responseStatus, latencyMs, error, url: webhook.url });
    if (error) throw new Error(`DLR ${delivery.messageId}#${delivery.seq} to ${webhook.url}: ${error}`);
  };

  return {
    async dispatch(messageId) {
      const { message: m } = await readState(messageId);
      const submit: CarrierSubmit = {
        messageId: m.id, orgId: m.orgId, from: m.from, to: m.normalizedTo, country: m.country, text: m.deliveredText,
        encoding: m.encoding, segments: m.messagesCount, submittedAt: new Date().toISOString(),
      };
      await deps.js.publish(SUBJECTS.carrierSubmit, JSON.stringify(submit), { msgID: `submit-${m.id}` });
    },

    async settle(tokenId, transitions, deliverNow) {
      const updated = await writeState(transitions);
      const first = transitions[0]?.seq ?? 0;
      const last = transitions.at(-1)?.seq ?? 0;
      await deps.js.publish(SUBJECTS.smsStatus(tokenId), JSON.stringify({ messages: [updated], transitions: transitions.map((t) => ({ ...t, orgId: updated.orgId, projectId: updated.projectId, tokenId, clientId: updated.clientId })) }), {
        msgID: `status-${updated.id}-${first}-${last}`,
      });
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
      await deps.deadDlrs.put(KV_KEYS.deadDlr(delivery.tokenId, delivery.messageId, delivery.seq), JSON.stringify({ ...delivery, reason, failedAt: new Date().toISOString() }));
    },

    async refund(messageId, orgId, micros) {
      // The marker makes a retried refund a no-op; a crash between marker and credit loses a
      // refund in the customer's disfavour, which is logged for reconciliation.
      try {
        await deps.idempotency.create(KV_KEYS.refund(messageId), String(micros));
      } catch {
        return;
      }
      deps.log.info({ messageId, orgId, micros }, 'refunding a message that never reached a carrier');
      await deps.balances.credit(orgId, micros);
    },
  };
}
