// "Send test DLR": one signed POST of a sample DLR to a token's webhook, made exactly as the
// lifecycle makes them (the same webhookHeaders and target checks, spec 1 §6 rule 1), and the
// receiver's answer: status, latency. A refused target is not contacted, and the page says
// only why it was refused: nothing about what (if anything) listens there.
import type { Webhook } from '../../../core/accounts';
import { newId } from '../../../core/ids';
import { isWebhookTargetRefused, webhookHeaders, type WebhookTargetPolicy } from '../../../core/sms';
import { postOnce } from '../../../infra/webhook-sender';
import type { Resolver } from '../../../infra/webhook-target';

export interface TestDlrAnswer {
  readonly status: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  /** Why the target was refused without sending anything (then status, latency and body say nothing). */
  readonly refused: string | null;
  /** The start of the receiver's body, for display. */
  readonly body: string;
  readonly webhookId: string;
}

export async function sendTestDlr(webhook: Webhook, timeoutMs: number, policy: WebhookTargetPolicy, resolver?: Resolver): Promise<TestDlrAnswer> {
  const id = `test-${newId()}`;
  const body = JSON.stringify({ id, clientId: 'console-test', status: 'delivered', code: 0, eventAt: new Date().toISOString() });
  const webhookId = `${id}.1`;
  const headers = webhookHeaders(webhook, { webhookId, attempt: 1, body, timestampSeconds: Math.floor(Date.now() / 1000) });
  const started = performance.now();
  try {
    const res = await postOnce({ url: webhook.url, headers, body, timeoutMs }, policy, resolver);
    const ok = res.status >= 200 && res.status < 300;
    return { status: res.status, latencyMs: Math.round(performance.now() - started), error: ok ? null : `answered ${res.status}`, refused: null, body: res.body, webhookId };
  } catch (err) {
    if (isWebhookTargetRefused(err)) return { status: null, latencyMs: 0, error: err.reason, refused: err.reason, body: '', webhookId };
    const error = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : err.message) : String(err);
    return { status: null, latencyMs: Math.round(performance.now() - started), error, refused: null, body: '', webhookId };
  }
}
