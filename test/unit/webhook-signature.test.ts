// Webhook signatures (docs/webhooks.md) checked by a library nobody here wrote: the
// `standardwebhooks` npm package, as receivers use it.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { isWhsecSecret, newWebhookSecret } from '../../core/accounts/secrets';
import type { Webhook } from '../../core/accounts/types';
import { LEGACY_HEADERS, receiverSecret, SIGNATURE_HEADER, signLegacy, webhookHeaders } from '../../core/sms/webhook-signature';

const body = JSON.stringify({ id: 'm-1', status: 'delivered', code: 0, eventAt: '2026-01-01T00:00:00.000Z' });
const now = (): number => Math.floor(Date.now() / 1000);
const headersOf = (webhook: Webhook, timestampSeconds = now()): Record<string, string> => webhookHeaders(webhook, { webhookId: 'm-1.3', attempt: 1, body, timestampSeconds });

describe('webhook signatures: Standard Webhooks', () => {
  test('a new secret is whsec_<base64> of 32 bytes, and the library verifies what it signs', () => {
    const secret = newWebhookSecret();
    expect(isWhsecSecret(secret)).toBe(true);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    const headers = headersOf({ url: 'http://x', secret, keyFormat: 'whsec', legacyHeaders: false });
    expect(headers).toMatchObject({ 'webhook-id': 'm-1.3', 'webhook-timestamp': expect.stringMatching(/^\d+$/) as unknown as string, 'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/) as unknown as string });
    expect(new StandardWebhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(Object.keys(headers)).not.toContain(LEGACY_HEADERS.signature);
  });

  test('a tampered body, another secret or a stale timestamp is refused', () => {
    const secret = newWebhookSecret();
    const webhook: Webhook = { url: 'http://x', secret, keyFormat: 'whsec' };
    expect(() => new StandardWebhook(secret).verify(`${body} `, headersOf(webhook))).toThrow('No matching signature');
    expect(() => new StandardWebhook(newWebhookSecret()).verify(body, headersOf(webhook))).toThrow('No matching signature');
    expect(() => new StandardWebhook(secret).verify(body, headersOf(webhook, now() - 600))).toThrow('too old');
  });

  test('a secret of an earlier release keys the HMAC with its bytes; receivers use its whsec_ form', () => {
    const legacy: Webhook = { url: 'http://x', secret: 'whsec_an-old_base64url-secret' };
    const headers = headersOf(legacy);
    expect(isWhsecSecret(legacy.secret)).toBe(false);
    expect(new StandardWebhook(receiverSecret(legacy)).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new StandardWebhook(Buffer.from(legacy.secret), { format: 'raw' }).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test('one secret text in both key formats signs with two keys, whichever was signed with first (keys are kept per secret and format)', () => {
    const text = newWebhookSecret();
    for (const order of [['whsec', 'raw'], ['raw', 'whsec']] as const) {
      const ts = now();
      for (const keyFormat of order) {
        const headers = headersOf({ url: 'http://x', secret: text, keyFormat, legacyHeaders: false }, ts);
        const receiver = keyFormat === 'whsec' ? new StandardWebhook(text) : new StandardWebhook(Buffer.from(text), { format: 'raw' });
        expect(receiver.verify(body, headers)).toEqual(JSON.parse(body));
      }
    }
  });

  test('records of earlier releases keep the X-Webhook-* headers (v1=<hex> over "<timestamp>.<body>"); legacyHeaders: false drops them', () => {
    const ts = now();
    const kept = headersOf({ url: 'http://x', secret: 'shh' }, ts);
    expect(kept[LEGACY_HEADERS.signature]).toBe(signLegacy('shh', ts, body));
    expect(kept[LEGACY_HEADERS.timestamp]).toBe(String(ts));
    expect(kept[LEGACY_HEADERS.id]).toBe('m-1.3');
    expect(Object.keys(headersOf({ url: 'http://x', secret: 'shh', legacyHeaders: false }, ts))).not.toContain(LEGACY_HEADERS.signature);
  });

  test('rotation: two signatures during the overlap, each verifying with its own secret; one after it', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    const rotating = (until: number): Webhook => ({ url: 'http://x', secret: newSecret, keyFormat: 'whsec', previous: { secret: oldSecret, keyFormat: 'whsec', until: new Date(until * 1000).toISOString() }, legacyHeaders: false });
    const during = headersOf(rotating(now() + 3600));
    expect(during[SIGNATURE_HEADER]?.split(' ')).toHaveLength(2);
    expect(new StandardWebhook(oldSecret).verify(body, during)).toEqual(JSON.parse(body));
    expect(new StandardWebhook(newSecret).verify(body, during)).toEqual(JSON.parse(body));
    const after = headersOf(rotating(now() - 1));
    expect(after[SIGNATURE_HEADER]?.split(' ')).toHaveLength(1);
    expect(() => new StandardWebhook(oldSecret).verify(body, after)).toThrow('No matching signature');
    expect(new StandardWebhook(newSecret).verify(body, after)).toEqual(JSON.parse(body));
  });
});
