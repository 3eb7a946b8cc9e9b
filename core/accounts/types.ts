// Accounts domain (DESIGN §4): organizations own projects; tokens of four kinds authenticate
// requests; balances and price profiles are per organization.
// The token kinds and product scopes are enumerated by the wire contract (schemas/admin.ts).
import { TOKEN_KINDS } from '../../schemas/admin';
export { PRODUCT_SCOPES, TOKEN_KINDS } from '../../schemas/admin';
export type TokenKind = (typeof TOKEN_KINDS)[number];

export interface Organization {
  readonly id: string;
  readonly name: string;
  readonly currency: string;
  readonly smppEnabled: boolean;
  readonly createdAt: string;
  /** Per-endpoint requests-per-minute ceilings granted to this organization (else the defaults). */
  readonly rateLimits?: Readonly<Record<string, number>>;
}

export interface Project {
  readonly id: string;
  readonly orgId: string;
  readonly name: string;
  readonly createdAt: string;
  /** IANA timezone for whole days, roundings and anniversaries of the audience filter; default UTC. */
  readonly timezone?: string;
}

/**
 * How a stored webhook secret becomes the HMAC key (docs/webhooks.md): `whsec` = the bytes
 * base64-decoded after the `whsec_` prefix (Standard Webhooks; every secret this release
 * issues); `raw` (or absent: records of earlier releases) = the secret's UTF-8 bytes.
 */
export type WebhookKeyFormat = 'whsec' | 'raw';

export interface WebhookSecret {
  readonly secret: string;
  readonly keyFormat?: WebhookKeyFormat;
}

export interface Webhook extends WebhookSecret {
  readonly url: string;
  /** The secret before the last rotation: it signs too (a second signature) until `until`. */
  readonly previous?: WebhookSecret & { readonly until: string };
  /**
   * Also send the X-Webhook-* signature headers of earlier releases (kept for one release).
   * Absent on records of earlier releases, which keep them; false on webhooks set since.
   */
  readonly legacyHeaders?: boolean;
}

export interface SmppCredentials {
  readonly systemId: string;
  readonly passwordHash: string;
}

export interface Token {
  readonly id: string;
  readonly kind: TokenKind;
  readonly name: string;
  readonly orgId: string;
  /** Set for api_sms, datasource and product tokens; null for account-wide legacy tokens. */
  readonly projectId: string | null;
  readonly datasourceId: string | null;
  readonly scopes: readonly string[];
  /** sha256 of the token value; the value itself is never stored. */
  readonly hash: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
  readonly webhook: Webhook | null;
  readonly smpp: SmppCredentials | null;
  /** Two-way virtual numbers or sender ids attached to this token. */
  readonly numbers: readonly string[];
  /** api_sms: the automatic reply to a HELP-family keyword (core/sms/opt-out.ts); none when unset. */
  readonly helpText?: string | null;
}

export type { Balance, ChargeHold, PendingRefund } from '../bus/records';

export type PriceKind = 'sms' | 'lookup';

export interface Price {
  readonly country: string;
  readonly currency: string;
  readonly priceMicros: number;
}

/** What an authenticated request may see: its organization, and its project unless legacy. */
export interface Principal {
  readonly token: Token;
  readonly org: Organization;
}
