// Standard Webhooks signatures end to end (docs/webhooks.md): secrets set and rotated with the
// admin CLI, DLRs from the real lifecycle verified by the `standardwebhooks` package; an earlier
// release's webhook record keeps its X-Webhook-* headers and its secret's bytes as the key.
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { Token } from '../../core/accounts/types';
import { KEYS } from '../../stores/account-store';
import { signLegacy } from '../../core/sms/webhook-signature';
import { admin, api } from '../../support/stack';
import { accountsMirrored, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type ReceivedDlr, type WebhookReceiver } from '../../support/webhook-receiver';

let receiver: WebhookReceiver;
let tenant: Tenant;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  tenant = await createTenant({ name: 'Signing Org' });
});
afterAll(() => receiver.close());

let counter = 0;
async function delivered(): Promise<ReceivedDlr> {
  counter += 1;
  const res = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Signing', to: `+491511${String(Date.now() % 10_000).padStart(4, '0')}${counter % 10}12`, text: 'signed' } });
  expect(res.status).toBe(201);
  const id = (res.body as { entity: { id: string } }).entity.id;
  await receiver.waitFor(() => receiver.forMessage(id).some((d) => d.body['status'] === 'delivered'));
  const found = receiver.forMessage(id).find((d) => d.body['status'] === 'delivered');
  if (!found) throw new Error('no delivered DLR');
  return found;
}

const headers = (d: ReceivedDlr): Record<string, string> => d.headers as Record<string, string>;

describe('webhook signing (docs/webhooks.md)', () => {
  test('admin webhook rotate: during the overlap each DLR carries two signatures, one per secret', async () => {
    const set = await admin<{ secret: string }>('webhook', 'set', '--token', tenant.tokenId, '--url', receiver.url);
    expect(set.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const rotated = await admin<{ secret: string; previousUntil: string }>('webhook', 'rotate', '--token', tenant.tokenId, '--overlap-hours', '1');
    expect(rotated.secret).not.toBe(set.secret);
    expect(Date.parse(rotated.previousUntil)).toBeGreaterThan(Date.now());
    await accountsMirrored();
    const dlr = await delivered();
    expect(headers(dlr)['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(new StandardWebhook(set.secret).verify(dlr.raw, headers(dlr))).toMatchObject({ status: 'delivered' });
    expect(new StandardWebhook(rotated.secret).verify(dlr.raw, headers(dlr))).toMatchObject({ status: 'delivered' });
    expect(headers(dlr)['x-webhook-signature']).toBeUndefined();
  });

  test("a webhook stored by an earlier release keeps its headers, and its secret's whsec_ form verifies", async () => {
    const old = 'whsec_an-earlier_release-secret';
    await withAccounts(async (accounts, _b, nats) => {
      const token = await accounts.getToken(tenant.tokenId);
      const stored: Token = { ...token, webhook: { url: receiver.url, secret: old } };
      await nats.kv.accounts.put(KEYS.token(token.id), JSON.stringify(stored));
    });
    await accountsMirrored();
    const signing = await admin<{ receiverSecret: string; legacyHeaders: boolean }>('webhook', 'signing', '--token', tenant.tokenId);
    expect(signing).toMatchObject({ receiverSecret: `whsec_${Buffer.from(old).toString('base64')}`, legacyHeaders: true });
    const dlr = await delivered();
    expect(new StandardWebhook(signing.receiverSecret).verify(dlr.raw, headers(dlr))).toMatchObject({ status: 'delivered' });
    const timestamp = Number(headers(dlr)['x-webhook-timestamp']);
    expect(headers(dlr)['x-webhook-signature']).toBe(signLegacy(old, timestamp, dlr.raw));
    expect(headers(dlr)['x-webhook-id']).toBe(headers(dlr)['webhook-id']);

    await admin('webhook', 'signing', '--token', tenant.tokenId, '--legacy-headers', 'off');
    await accountsMirrored();
    const after = await delivered();
    expect(headers(after)['x-webhook-signature']).toBeUndefined();
    expect(new StandardWebhook(signing.receiverSecret).verify(after.raw, headers(after))).toMatchObject({ status: 'delivered' });
  });
});
