// Webhook signing (docs/webhooks.md): the Standard Webhooks scheme (standardwebhooks.com), so
// receivers verify with the `standardwebhooks` or `svix` libraries:
//   webhook-id:        <message id>.<seq>   (the same on every retry: the dedupe key)
//   webhook-timestamp: <unix seconds>
//   webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">
// The key is the token's secret decoded (`whsec_<base64>`), or the UTF-8 bytes of a secret of an
// earlier release. During a rotation's overlap the previous secret signs too: two signatures,
// space-separated. Earlier releases' headers (X-Webhook-Signature: v1=<hex> over
// "<timestamp>.<body>") are added for webhooks that keep them (Webhook.legacyHeaders).
import { createHmac } from 'node:crypto';
import type { Webhook, WebhookSecret } from '../accounts/types';

export const ID_HEADER = 'webhook-id';
export const TIMESTAMP_HEADER = 'webhook-timestamp';
export const SIGNATURE_HEADER = 'webhook-signature';
export const ATTEMPT_HEADER = 'X-Webhook-Attempt';

/** Headers of earlier releases, sent only while a webhook keeps them (one release). */
export const LEGACY_HEADERS = { signature: 'X-Webhook-Signature', timestamp: 'X-Webhook-Timestamp', id: 'X-Webhook-Id' } as const;

const WHSEC = 'whsec_';

/** The HMAC key of a stored secret. */
export function webhookKey(secret: WebhookSecret): Buffer {
  if (secret.keyFormat === 'whsec') return Buffer.from(secret.secret.slice(WHSEC.length), 'base64');
  return Buffer.from(secret.secret, 'utf8');
}

/** The secret as a receiver configures it in a Standard Webhooks library (`whsec_<base64 key>`). */
export function receiverSecret(secret: WebhookSecret): string {
  return secret.keyFormat === 'whsec' ? secret.secret : `${WHSEC}${webhookKey(secret).toString('base64')}`;
}

/** `v1,<base64>`: one Standard Webhooks signature. */
export function signStandard(secret: WebhookSecret, webhookId: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', webhookKey(secret)).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64')}`;
}

/** The X-Webhook-Signature of earlier releases: `v1=<hex>` over "<timestamp>.<body>", keyed by the secret text. */
export function signLegacy(secret: string, timestampSeconds: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** The secrets that sign at `timestampSeconds`: the current one, and the previous one during its overlap. */
export function signingSecrets(webhook: Webhook, timestampSeconds: number): WebhookSecret[] {
  const previous = webhook.previous;
  const overlapping = previous !== undefined && Date.parse(previous.until) / 1000 > timestampSeconds;
  return overlapping ? [webhook, previous] : [webhook];
}

/** Every header of one webhook attempt (DLR or inbound): the one place the signature scheme is applied. */
export function webhookHeaders(webhook: Webhook, delivery: { readonly webhookId: string; readonly attempt: number; readonly body: string; readonly timestampSeconds: number }): Record<string, string> {
  const { webhookId, body, timestampSeconds } = delivery;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'sms-platform-dlr/1',
    [ID_HEADER]: webhookId,
    [TIMESTAMP_HEADER]: String(timestampSeconds),
    [SIGNATURE_HEADER]: signingSecrets(webhook, timestampSeconds).map((s) => signStandard(s, webhookId, timestampSeconds, body)).join(' '),
    [ATTEMPT_HEADER]: String(delivery.attempt),
  };
  if (webhook.legacyHeaders !== false) {
    headers[LEGACY_HEADERS.timestamp] = String(timestampSeconds);
    headers[LEGACY_HEADERS.signature] = signLegacy(webhook.secret, timestampSeconds, body);
    headers[LEGACY_HEADERS.id] = webhookId;
  }
  return headers;
}
