// Webhook signing (DESIGN §4; spec 1 §6 says "not shown"): HMAC-SHA256 over
// "<unix seconds>.<raw body>" with the token's webhook secret, sent as
//   X-Webhook-Timestamp: <unix seconds>
//   X-Webhook-Signature: v1=<hex digest>
// Receivers recompute it, compare in constant time, and reject stale timestamps (replays).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Webhook } from '../accounts/types';

export const SIGNATURE_HEADER = 'X-Webhook-Signature';
export const TIMESTAMP_HEADER = 'X-Webhook-Timestamp';
export const WEBHOOK_ID_HEADER = 'X-Webhook-Id';
export const ATTEMPT_HEADER = 'X-Webhook-Attempt';

export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export function verifyWebhook(secret: string, timestamp: string, body: string, signature: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const ts = Number(timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, ts, body));
  const actual = Buffer.from(signature);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** Every header of one DLR webhook attempt: the one place the signature scheme is applied. */
export function webhookHeaders(webhook: Webhook, delivery: { readonly webhookId: string; readonly attempt: number; readonly body: string; readonly timestampSeconds: number }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'sms-platform-dlr/1',
    [TIMESTAMP_HEADER]: String(delivery.timestampSeconds),
    [SIGNATURE_HEADER]: signWebhook(webhook.secret, delivery.timestampSeconds, delivery.body),
    [WEBHOOK_ID_HEADER]: delivery.webhookId,
    [ATTEMPT_HEADER]: String(delivery.attempt),
  };
}
