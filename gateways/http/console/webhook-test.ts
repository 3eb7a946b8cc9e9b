// "Send test DLR": one signed POST of a sample DLR to a token's webhook, made exactly as the
// lifecycle makes them (the same webhookHeaders), and the receiver's answer: status, latency.
import type { Webhook } from '../../../core/accounts/types';
import { newId } from '../../../core/ids';
import { webhookHeaders } from '../../../core/sms/webhook-signature';

export interface TestDlrAnswer {
  readonly status: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
  /** The start of the receiver's body, for display. */
  readonly body: string;
  readonly webhookId: string;
}

export async function sendTestDlr(webhook: Webhook, timeoutMs: number): Promise<TestDlrAnswer> {
  const id = `test-${newId()}`;
  const body = JSON.stringify({ id, clientId: 'console-test', status: 'delivered', code: 0, eventAt: new Date().toISOString() });
  const webhookId = `${id}.1`;
  const headers = webhookHeaders(webhook, { webhookId, attempt: 1, body, timestampSeconds: Math.floor(Date.now() / 1000) });
  const started = performance.now();
  try {
    const res = await fetch(webhook.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = (await res.text()).slice(0, 500);
    return { status: res.status, latencyMs: Math.round(performance.now() - started), error: res.ok ? null : `answered ${res.status}`, body: text, webhookId };
  } catch (err) {
    const error = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (err.cause instanceof Error ? err.cause.message : err.message)) : String(err);
    return { status: null, latencyMs: Math.round(performance.now() - started), error, body: '', webhookId };
  }
}
