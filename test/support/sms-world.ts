// The SMS acceptance core over in-memory ports, and what an in-process HTTP app (createHttpApp)
// needs around it, for suites that drive the real app without an engine: one organization, an
// api_sms token (TOKEN) and a legacy one (LEGACY), a balance, the queued messages, and a price
// for DE only.
import type { Config } from '../../config';
import type { Organization, Price, Principal, Token } from '../../core/accounts/types';
import { SmsAcceptance } from '../../core/sms/acceptance';
import type { SmsMessage } from '../../core/sms/message';
import type { Engines } from '../../roles/engines';

export const TOKEN = 'sms_good';
export const LEGACY = 'leg_good';
export const DE = '+4915112345678';

const org: Organization = { id: 'org-1', name: 'Org', currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' };
const token = (id: string, kind: Token['kind']): Token => ({
  id, kind, name: id, orgId: org.id, projectId: kind === 'legacy' ? '' : 'project-1', datasourceId: null, scopes: [], hash: '00',
  createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null, webhook: null, smpp: null, numbers: [],
} as Token);

export class SmsWorld {
  balance = 10_000_000;
  readonly queued: SmsMessage[] = [];
  readonly principals = new Map<string, Principal>([[TOKEN, { token: token('t1', 'api_sms'), org }], [LEGACY, { token: token('t2', 'legacy'), org }]]);

  readonly acceptance = new SmsAcceptance({
    prices: { price: (_o: string, _k: string, country: string): Price | undefined => (country === 'DE' ? { country, currency: 'EUR', priceMicros: 75_000 } : undefined) },
    funds: {
      charge: async (_o: string, micros: number) => {
        if (micros > this.balance) return false;
        this.balance -= micros;
        return true;
      },
      credit: async (_o: string, micros: number) => { this.balance += micros; },
      settle: () => undefined,
      isHeld: async () => false,
    },
    states: { putAll: async () => undefined, get: async () => null },
    clientIds: { claim: async () => null, takeOver: async () => false, release: async () => undefined },
    queue: { enqueue: async (ms: readonly SmsMessage[]) => { this.queued.push(...ms); } },
    optOuts: { isOptedOut: async () => false },
  });

  /** The config (64 KiB bodies, generous rate limits) and engines of an app over this world. */
  appParts(trustProxy: Config['http']['trustProxy'] = false): { config: Config; engines: Engines } {
    const config = { http: { bodyLimitBytes: 64 * 1024, trustProxy }, rateLimits: { perMinute: 1000, bulkPerMinute: 1000 }, ingest: { basePath: '/ingest/v1', ratePerMinute: 1000 }, audience: { basePath: '/audience/v1' } } as unknown as Config;
    const engines = {
      probes: {},
      directory: { authenticate: (value: string) => this.principals.get(value), prices: () => [] },
      rateLimiter: { take: async () => ({ allowed: true, limit: 1000, remaining: 999, reset: Math.floor(Date.now() / 60_000) * 60 + 60 }) },
      balances: { get: async () => ({ currency: 'EUR', availableMicros: this.balance }) },
    } as unknown as Engines;
    return { config, engines };
  }
}
