// Fast tenant set-up for integration suites: writes organizations, projects, tokens, prices,
// balances and rate-limit grants straight to the stack's NATS KV through the product's own
// stores (AccountStore, BalanceLedger), instead of the ~2 s per call admin CLI. The product
// sees these writes through its KV-watch mirror within milliseconds; `createTenant` waits
// until its tokens authenticate before it returns.
import type { TokenKind } from '../core/accounts';
import { toMicros } from '../core/money';
import { createLogger } from '../infra/logger';
import { connectNats, type Nats } from '../infra/nats';
import { AccountStore } from '../stores/account-store';
import { BalanceLedger } from '../stores/balance-ledger';
import { eventually } from './eventually';
import { api, stack } from './stack';

export const V1 = '/transactional/v1';

/** Per-segment SMS prices every tenant gets unless told otherwise (EUR). */
export const DEFAULT_SMS_PRICES: Readonly<Record<string, number>> = { DE: 0.075, FR: 0.07, GB: 0.04, US: 0.01 };
export const DEFAULT_LOOKUP_PRICE = 0.005;

export interface TenantOptions {
  readonly name?: string;
  /** Balance in EUR; default 100. `null` leaves the organization without any balance entry. */
  readonly balance?: number | null;
  /** Also create an account-wide legacy token. */
  readonly legacy?: boolean;
  readonly smsPrices?: Readonly<Record<string, number>>;
  /** Lookup price for each country of `smsPrices`. */
  readonly lookupPrice?: number;
  /** Per-endpoint requests-per-minute grants, e.g. `{ 'v1-sms-read': 3 }`. */
  readonly rateLimits?: Readonly<Record<string, number>>;
}

export interface Tenant {
  readonly orgId: string;
  readonly projectId: string;
  readonly tokenId: string;
  /** The api_sms token value of the project. */
  readonly token: string;
  readonly legacyTokenId?: string;
  readonly legacyToken?: string;
}

const log = createLogger('warn', { component: 'test-tenants' });

/** Runs `fn` with the product's account and balance stores over a fresh NATS connection, then closes it. */
export async function withAccounts<T>(fn: (accounts: AccountStore, balances: BalanceLedger, nats: Nats) => Promise<T>): Promise<T> {
  const nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'test-tenants' }, log);
  try {
    return await fn(new AccountStore(nats.kv.accounts), new BalanceLedger(nats.kv.balances), nats);
  } finally {
    await nats.close();
  }
}

/** Polls until `token` authenticates at `base` (the product's account mirror caught up), up to `timeoutMs`. */
export async function waitForToken(token: string, base: string = V1, timeoutMs = 20_000): Promise<void> {
  await eventually(() => api(`${base}/organization/account`, { token }), { what: `the token to authenticate at ${base || '/'}`, until: (res) => res.status === 200, timeoutMs, intervalMs: 25 });
}

/**
 * An organization (EUR) with one project, an api_sms token, optionally a legacy token, a
 * balance, SMS prices (DE 0.075, FR 0.07, GB 0.04, US 0.01 by default), lookup prices (0.005)
 * and rate-limit grants. Everything but the tokens is written first, so that a token that
 * authenticates proves the rest is in the product's mirror too.
 */
export async function createTenant(opts: TenantOptions = {}): Promise<Tenant> {
  const tenant = await withAccounts(async (accounts, balances) => {
    const org = await accounts.createOrg({ name: opts.name ?? 'Test Org', currency: 'EUR' });
    for (const [endpoint, perMinute] of Object.entries(opts.rateLimits ?? {})) await accounts.setOrgRateLimit(org.id, endpoint, perMinute);
    const project = await accounts.createProject(org.id, 'Test Project');
    const smsPrices = opts.smsPrices ?? DEFAULT_SMS_PRICES;
    const lookupPrice = opts.lookupPrice ?? DEFAULT_LOOKUP_PRICE;
    await Promise.all(Object.entries(smsPrices).flatMap(([country, price]) => [
      accounts.setPrice(org.id, 'sms', country, { country, currency: 'EUR', priceMicros: toMicros(price) }),
      accounts.setPrice(org.id, 'lookup', country, { country, currency: 'EUR', priceMicros: toMicros(lookupPrice) }),
    ]));
    const balance = opts.balance === undefined ? 100 : opts.balance;
    if (balance !== null) await balances.set(org.id, { currency: 'EUR', availableMicros: toMicros(balance) });
    const sms = await accounts.createToken({ kind: 'api_sms', orgId: org.id, projectId: project.id });
    const legacy = opts.legacy ? await accounts.createToken({ kind: 'legacy', orgId: org.id }) : undefined;
    return {
      orgId: org.id,
      projectId: project.id,
      tokenId: sms.token.id,
      token: sms.value,
      ...(legacy ? { legacyTokenId: legacy.token.id, legacyToken: legacy.value } : {}),
    };
  });
  await waitForToken(tenant.token, V1);
  if (tenant.legacyToken) await waitForToken(tenant.legacyToken, '');
  return tenant;
}

/**
 * Waits until the product's account mirror has every `accounts` KV write made before the call:
 * a marker tenant written after them authenticates, and a KV watch delivers in order. It proves
 * this for the process that serves the HTTP API, which in the single-process test stack is the
 * one whose worker reads webhooks and numbers too.
 */
export async function accountsMirrored(): Promise<void> {
  await createTenant({ name: 'Mirror marker', balance: null });
}

/** Another project of `orgId` with its own api_sms token (waited for). */
export async function addProject(orgId: string): Promise<{ projectId: string; tokenId: string; token: string }> {
  const created = await withAccounts(async (accounts) => {
    const project = await accounts.createProject(orgId, 'Another Project');
    const { token, value } = await accounts.createToken({ kind: 'api_sms', orgId, projectId: project.id });
    return { projectId: project.id, tokenId: token.id, token: value };
  });
  await waitForToken(created.token, V1);
  return created;
}

/** A token of any kind (not waited for: a kind the API refuses never authenticates there). */
export async function addToken(orgId: string, kind: TokenKind, projectId: string | null): Promise<{ tokenId: string; token: string }> {
  return withAccounts(async (accounts) => {
    const { token, value } = await accounts.createToken({ kind, orgId, projectId, ...(kind === 'product' ? { scopes: ['ingest:write'] } : {}) });
    return { tokenId: token.id, token: value };
  });
}

export async function revokeToken(tokenId: string): Promise<void> {
  await withAccounts(async (accounts) => { await accounts.revokeToken(tokenId); });
}

export async function setOrgRateLimit(orgId: string, endpoint: string, perMinute: number | null): Promise<void> {
  await withAccounts(async (accounts) => { await accounts.setOrgRateLimit(orgId, endpoint, perMinute); });
}

/** Sets the absolute balance in EUR. */
export async function setBalance(orgId: string, amount: number): Promise<void> {
  await withAccounts(async (_accounts, balances) => {
    await balances.set(orgId, { currency: 'EUR', availableMicros: toMicros(amount) });
  });
}

/** The balance in micro-units as stored (null when the organization has none). */
export async function balanceMicros(orgId: string): Promise<number | null> {
  return withAccounts(async (_accounts, balances) => (await balances.get(orgId))?.availableMicros ?? null);
}
