// One fixed tenant over the in-memory SMS ports (./sms-ports.ts), for suites that drive the real
// HTTP app (createHttpApp) without an engine and name its token in requests: organization
// `org-1`, an api_sms token (TOKEN, project `project-1`) and a legacy one (LEGACY), a balance of
// 10 EUR (`balance`, in micros), the queued messages, and a price for DE only; the app's config
// takes 64 KiB bodies and 1000 sends a minute.
import type { Organization, Token } from '../../core/accounts/types';
import { MemoryPorts } from './sms-ports';

export const TOKEN = 'sms_good';
export const LEGACY = 'leg_good';
export const DE = '+4915112345678';

const org: Organization = { id: 'org-1', name: 'Org', currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' };
const token = (id: string, kind: Token['kind']): Token => ({
  id, kind, name: id, orgId: org.id, projectId: kind === 'legacy' ? '' : 'project-1', datasourceId: null, scopes: [], hash: '00',
  createdAt: '2026-01-01T00:00:00.000Z', revokedAt: null, webhook: null, smpp: null, numbers: [],
} as Token);

export class SmsWorld extends MemoryPorts {
  constructor() {
    super({ bodyLimitBytes: 64 * 1024, perMinute: 1000 });
    this.orgs.set(org.id, org);
    this.smsPrices.set(org.id, new Map([['DE', 75_000]]));
    this.balances.set(org.id, 10_000_000);
    this.principals.set(TOKEN, { token: token('t1', 'api_sms'), org });
    this.principals.set(LEGACY, { token: token('t2', 'legacy'), org });
  }

  /** The organization's available balance in micros. */
  get balance(): number {
    return this.balances.get(org.id) ?? 0;
  }
}
