// In-memory fakes of the SMS acceptance core's ports (core/sms/ports.ts) with the semantics of
// the real stores, and the real HTTP app over them: several organizations and projects, their
// tokens, balances (a charge and its hold in one step, settled or credited back), prices,
// clientId claims (claim, compare-and-set take-over, release by holder), message states, the
// accepted queue and opt-outs. For suites that check the acceptance rules (spec 1 §2, §4, §7,
// §8; DESIGN §4) through POST /sms and POST /sms/bulk without an engine.
import { randomUUID } from 'node:crypto';
import type { Config } from '../../config';
import type { Balance, Organization, Price, Principal, Token } from '../../core/accounts/types';
import { toMicros } from '../../core/money';
import { SmsAcceptance } from '../../core/sms/acceptance';
import type { SmsMessage } from '../../core/sms/message';
import type { AcceptedQueue, ClientIds, Funds, HoldSpec, MessageStates, OptOuts, PriceBook } from '../../core/sms/ports';
import { createHttpApp, type SmsServices } from '../../gateways/http/app';
import { createLogger } from '../../infra/logger';
import type { Engines } from '../../roles/engines';

/** The SMS prices of support/tenants.ts's createTenant, in EUR. */
export const DEFAULT_SMS_PRICES: Readonly<Record<string, number>> = { DE: 0.075, FR: 0.07, GB: 0.04, US: 0.01 };

export interface MemoryTenant {
  readonly orgId: string;
  readonly projectId: string;
  /** The api_sms token's value (Bearer). */
  readonly token: string;
}

export interface MemoryTenantOptions {
  /** Balance in EUR; default 100. `null`: the organization has no balance entry. */
  readonly balance?: number | null;
  readonly smsPrices?: Readonly<Record<string, number>>;
}

interface Hold { readonly orgId: string; readonly micros: number; readonly ids: readonly string[] }

export class MemoryPorts {
  /** Available micros per organization (absent: never had a balance). */
  readonly balances = new Map<string, number>();
  readonly holds = new Map<string, Hold>();
  readonly states = new Map<string, SmsMessage>();
  /** `<scope>\u0000<clientId>` → the message id holding it. */
  readonly claims = new Map<string, string>();
  /** Every message queued so far, in order. */
  readonly queued: SmsMessage[] = [];
  /** `<projectId>\u0000<+E.164>` of opted-out recipients. */
  readonly optedOut = new Set<string>();
  /** org → country → price micros (sms). */
  readonly smsPrices = new Map<string, Map<string, number>>();
  readonly orgs = new Map<string, Organization>();
  readonly principals = new Map<string, Principal>();

  readonly prices: PriceBook = {
    price: (orgId, kind, country): Price | undefined => {
      const micros = kind === 'sms' ? this.smsPrices.get(orgId)?.get(country) : undefined;
      return micros === undefined ? undefined : { country, currency: 'EUR', priceMicros: micros };
    },
  };

  readonly funds: Funds = {
    // Check and take in one synchronous step: atomic, as the ledger's compare-and-set is.
    charge: async (orgId: string, micros: number, hold?: HoldSpec): Promise<boolean> => {
      const available = this.balances.get(orgId) ?? 0;
      if (micros > available) return false;
      this.balances.set(orgId, available - micros);
      if (hold) this.holds.set(hold.id, { orgId, micros, ids: hold.ids ?? [] });
      return true;
    },
    credit: async (orgId: string, micros: number, holdId?: string): Promise<void> => {
      this.balances.set(orgId, (this.balances.get(orgId) ?? 0) + micros);
      if (holdId) this.holds.delete(holdId);
    },
    settle: (_orgId: string, holdId: string): void => { this.holds.delete(holdId); },
    isHeld: async (orgId: string, messageId: string): Promise<boolean> =>
      [...this.holds.entries()].some(([id, h]) => h.orgId === orgId && (id === messageId || h.ids.includes(messageId))),
  };

  readonly messageStates: MessageStates = {
    putAll: async (messages) => { for (const m of messages) this.states.set(m.id, m); },
    get: async (id) => this.states.get(id) ?? null,
  };

  readonly clientIds: ClientIds = {
    claim: async (scope, clientId, messageId) => {
      const key = `${scope}\u0000${clientId}`;
      const held = this.claims.get(key);
      if (held !== undefined) return held;
      this.claims.set(key, messageId);
      return null;
    },
    takeOver: async (scope, clientId, heldBy, messageId) => {
      const key = `${scope}\u0000${clientId}`;
      if (this.claims.get(key) !== heldBy) return false;
      this.claims.set(key, messageId);
      return true;
    },
    release: async (scope, clientId, messageId) => {
      const key = `${scope}\u0000${clientId}`;
      if (this.claims.get(key) === messageId) this.claims.delete(key);
    },
  };

  readonly queue: AcceptedQueue = { enqueue: async (messages) => { this.queued.push(...messages); } };

  readonly optOuts: OptOuts = { isOptedOut: (projectId, number) => this.optedOut.has(`${projectId}\u0000${number}`) };

  readonly acceptance = new SmsAcceptance({ prices: this.prices, funds: this.funds, states: this.messageStates, clientIds: this.clientIds, queue: this.queue, optOuts: this.optOuts });

  /** An organization with one project and its api_sms token, a balance and SMS prices. */
  createTenant(opts: MemoryTenantOptions = {}): MemoryTenant {
    const org: Organization = { id: randomUUID(), name: 'Org', currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' };
    this.orgs.set(org.id, org);
    this.smsPrices.set(org.id, new Map(Object.entries(opts.smsPrices ?? DEFAULT_SMS_PRICES).map(([country, eur]) => [country, toMicros(eur)])));
    const balance = opts.balance === undefined ? 100 : opts.balance;
    if (balance !== null) this.setBalance(org.id, balance);
    return this.addProject(org.id);
  }

  /** Another project of the organization, with its own api_sms token. */
  addProject(orgId: string): MemoryTenant {
    const org = this.orgs.get(orgId);
    if (!org) throw new Error(`no organization ${orgId}`);
    const projectId = randomUUID();
    const value = `sms_${randomUUID()}`;
    const token = {
      id: randomUUID(), kind: 'api_sms', name: 'test', orgId, projectId, datasourceId: null, scopes: [], hash: '00',
      createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null, webhook: null, smpp: null, numbers: [],
    } as unknown as Token;
    this.principals.set(value, { token, org });
    return { orgId, projectId, token: value };
  }

  /** Sets the absolute balance in EUR. */
  setBalance(orgId: string, eur: number): void {
    this.balances.set(orgId, toMicros(eur));
  }

  /** The balance in micro-units (null when the organization has none). */
  balanceMicros(orgId: string): number | null {
    return this.balances.get(orgId) ?? null;
  }

  /** `bodyLimitBytes` (default 1 MiB) and `perMinute` sends, single and bulk (default 100,000), of the app's config. */
  constructor(private readonly limits: { readonly bodyLimitBytes?: number; readonly perMinute?: number } = {}) {}

  /** The config and engines of an app over these ports (the rate limiter always allows). */
  appParts(trustProxy: Config['http']['trustProxy'] = false): { config: Config; engines: Engines } {
    const perMinute = this.limits.perMinute ?? 100_000;
    const config = { http: { bodyLimitBytes: this.limits.bodyLimitBytes ?? 1024 * 1024, trustProxy }, rateLimits: { perMinute, bulkPerMinute: perMinute }, ingest: { basePath: '/ingest/v1', ratePerMinute: 1000 }, audience: { basePath: '/audience/v1' } } as unknown as Config;
    const engines = {
      probes: {},
      directory: {
        authenticate: (value: string) => this.principals.get(value),
        prices: (orgId: string, kind: string): Price[] => (kind === 'sms' ? [...(this.smsPrices.get(orgId) ?? new Map<string, number>()).entries()].map(([country, priceMicros]) => ({ country, currency: 'EUR', priceMicros })) : []),
      },
      rateLimiter: { take: async (_scope: string, _endpoint: string, limit: number) => ({ allowed: true, limit, remaining: limit - 1, reset: Math.floor(Date.now() / 60_000) * 60 + 60 }) },
      balances: {
        get: async (orgId: string): Promise<Balance | null> => {
          const micros = this.balances.get(orgId);
          return micros === undefined ? null : { currency: 'EUR', availableMicros: micros };
        },
      },
    } as unknown as Engines;
    return { config, engines };
  }

  /** The real HTTP app (SMS API v1 and legacy) over these ports; generous rate limits. */
  app(): ReturnType<typeof createHttpApp> {
    const { config, engines } = this.appParts();
    const services = { acceptance: this.acceptance } as unknown as SmsServices;
    return createHttpApp({ config, engines, services, log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent') });
  }
}
