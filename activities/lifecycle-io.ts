// The I/O the lifecycle activities share: a message's KV state written forward only, and one
// signed webhook attempt of a DLR (its record returned, not yet published).
import { ApplicationFailure } from '@temporalio/common';
import { KV_KEYS } from '../core/bus/names';
import { isFinal, progressRank, refundOnce, webhookHeaders, type DlrAttempt, type DlrDelivery, type SmsMessage, type Transition, type VersionedMessage } from '../core/sms';
import type { LifecycleDeps } from './lifecycle-deps';

/** Message states remembered per process (a message needs them for a few seconds). */
const WRITTEN_CACHE_SIZE = 100_000;

export interface LifecycleIo {
  readState(id: string): Promise<VersionedMessage>;
  /**
   * The message's state (null when it has none), kept for its first writeState in this process:
   * the hand-off reads it, and the first settle then writes without reading it again.
   */
  readAndKeep(id: string): Promise<VersionedMessage | null>;
  /**
   * The message's KV state after `transitions`, written by compare-and-set and never backwards: a
   * late write from an abandoned attempt of an earlier settle (its local activity timed out while
   * NATS was unreachable, and the retry went ahead) must not overwrite a later status.
   */
  writeState(transitions: readonly Transition[]): Promise<SmsMessage>;
  /** One webhook attempt; its record says how it went (outcome `failed` with the error). */
  attemptOnce(delivery: DlrDelivery, number: number): Promise<DlrAttempt>;
  /** Refunds a message's charge exactly once, however often this runs (core/sms/refund.ts). */
  refund(messageId: string, orgId: string, micros: number): Promise<void>;
}

export function createLifecycleIo(deps: LifecycleDeps): LifecycleIo {
  const readState = async (id: string): Promise<VersionedMessage> => {
    const state = await deps.states.read(id);
    if (!state) throw ApplicationFailure.nonRetryable(`message ${id} has no state in KV (expired?)`, 'MessageStateMissing');
    return state;
  };

  // The state this process last read for the hand-off or wrote per message: the next settle of
  // the message usually runs here too and skips the read; a stale entry fails its
  // compare-and-set and is read again.
  const written = new Map<string, VersionedMessage>();
  const remember = (state: VersionedMessage): void => {
    if (written.size >= WRITTEN_CACHE_SIZE) {
      const oldest = written.keys().next();
      if (!oldest.done) written.delete(oldest.value);
    }
    written.set(state.message.id, state);
  };

  const readAndKeep = async (id: string): Promise<VersionedMessage | null> => {
    const state = await deps.states.read(id);
    if (state && !isFinal(state.message.status)) remember(state);
    return state;
  };

  const writeState = async (transitions: readonly Transition[]): Promise<SmsMessage> => {
    const id = transitions[0]?.messageId ?? '';
    let known = written.get(id);
    written.delete(id);
    for (;;) {
      const { message: stored, revision } = known ?? (await readState(id));
      known = undefined;
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
      const next = await deps.states.replace(updated, revision);
      if (next !== null) {
        if (!isFinal(updated.status)) remember({ message: updated, revision: next });
        return updated;
      }
    }
  };

  const attemptOnce = async (delivery: DlrDelivery, number: number): Promise<DlrAttempt> => {
    const token = deps.tokens.token(delivery.tokenId);
    const webhook = token && !token.revokedAt ? token.webhook : null;
    const base = { messageId: delivery.messageId, orgId: token?.orgId ?? '', tokenId: delivery.tokenId, seq: delivery.seq, status: delivery.payload.status, attempt: number };
    if (!webhook) {
      return { ...base, outcome: 'skipped', responseStatus: null, latencyMs: 0, error: token ? 'no webhook configured' : 'token revoked or unknown', url: null, at: new Date().toISOString() };
    }
    const body = JSON.stringify(delivery.payload);
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    let responseStatus: number | null = null;
    let error: string | null = null;
    try {
      responseStatus = await deps.webhooks.post({
        url: webhook.url,
        body,
        timeoutMs: deps.webhookTimeoutMs,
        headers: webhookHeaders(webhook, { webhookId: `${delivery.messageId}.${delivery.seq}`, attempt: number, body, timestampSeconds: timestamp }),
      });
      if (responseStatus < 200 || responseStatus >= 300) error = `webhook answered ${responseStatus}`;
    } catch (err) {
      error = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${deps.webhookTimeoutMs} ms` : err.message) : String(err);
    }
    const latencyMs = Math.round(performance.now() - started);
    return { ...base, outcome: error ? 'failed' : 'delivered', responseStatus, latencyMs, error, url: webhook.url, at: new Date().toISOString() };
  };

  const refund = async (messageId: string, orgId: string, micros: number): Promise<void> => {
    if (await refundOnce(deps.funds, deps.once, orgId, KV_KEYS.refund(messageId), micros)) {
      deps.log.info({ messageId, orgId, micros }, 'refunded a message that never reached a carrier');
    }
  };

  return { readState, readAndKeep, writeState, attemptOnce, refund };
}
