// The provisioning functions (core/provisioning/provisioning.ts) over the NATS stores: the one
// Provisioning the admin CLI (cli/admin.ts) and the admin API (roles/gateway-http.ts →
// gateways/http/admin-api.ts) both build, so both write accounts the same way.
import type { KV } from '@nats-io/kv';
import { Provisioning } from '../core/provisioning/provisioning';
import type { WebhookTargetPolicy } from '../core/sms';
import { checkWebhookTarget, type Resolver } from '../infra/webhook-target';
import { AccountNotFoundError, type AccountStore } from './account-store';
import type { BalanceLedger } from './balance-ledger';
import { DatasourceStore } from './datasource-store';

export function provisioningOver(stores: { readonly accounts: AccountStore; readonly balances: BalanceLedger; readonly accountsKv: KV }, webhookTargets: WebhookTargetPolicy, resolver?: Resolver): Provisioning {
  return new Provisioning({
    accounts: stores.accounts,
    balances: stores.balances,
    datasources: new DatasourceStore(stores.accountsKv, stores.accounts),
    webhookTarget: async (url) => (await checkWebhookTarget(url, webhookTargets, resolver)).url.toString(),
    isNotFound: (err) => err instanceof AccountNotFoundError,
  });
}
