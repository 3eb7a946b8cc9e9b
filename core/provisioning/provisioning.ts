// Provisioning (DESIGN §4 "Provisioning over HTTP"): creating organizations, projects, tokens,
// balances, prices, webhooks and datasources, with the rules both front ends share. The admin
// CLI (cli/admin.ts) and the admin API (gateways/http/admin-api.ts) call these functions, so a
// token, price or balance made either way is made the same way. Over ports: the stores
// (stores/account-store.ts, balance-ledger.ts, datasource-store.ts) implement them.
// Refusals are AppErrors: VALIDATION_FAILED naming the field, NOT_FOUND for an unknown or
// foreign organization, project, token or datasource (never 403).
import { AppError, validationError } from '../errors';
import type { Datasource } from '../ingest/types';
import { fromMicros, toMicros } from '../money';
import { isWebhookTargetRefused } from '../sms/webhook-target';
import { MAX_AMOUNT, RECORD_ID_PATTERN } from '../../schemas/admin';
import { PRODUCT_SCOPES, TOKEN_KINDS, type Balance, type Organization, type Price, type PriceKind, type Project, type Token, type TokenKind } from '../accounts/types';

/** What provisioning writes and reads of the accounts (stores/account-store.ts). */
export interface ProvisioningAccounts {
  createOrg(input: { name: string; currency?: string; smppEnabled?: boolean }): Promise<Organization>;
  getOrg(id: string): Promise<Organization>;
  createProject(orgId: string, name: string): Promise<Project>;
  getProject(id: string): Promise<Project>;
  createToken(input: { kind: TokenKind; orgId: string; projectId?: string | null; datasourceId?: string | null; scopes?: readonly string[]; name?: string }): Promise<{ token: Token; value: string }>;
  getToken(id: string): Promise<Token>;
  setPrice(orgId: string, kind: PriceKind, country: string, price: Price): Promise<Price>;
  setWebhook(id: string, url: string, secret?: string): Promise<Token>;
}

/** The balances (stores/balance-ledger.ts): set, and credited atomically beside live traffic. */
export interface ProvisioningBalances {
  get(orgId: string): Promise<Balance | null>;
  set(orgId: string, balance: Balance): Promise<Balance>;
  credit(orgId: string, micros: number): Promise<void>;
}

export interface ProvisioningDatasources {
  create(projectId: string, name: string, options: { strict?: boolean }): Promise<Datasource>;
  get(id: string): Promise<Datasource>;
}

/** A webhook URL checked against the target rules (infra/webhook-target.ts): the URL to store, or a WebhookTargetRefusedError. */
export type WebhookTargetCheck = (url: string) => Promise<string>;

export interface ProvisioningPorts {
  readonly accounts: ProvisioningAccounts;
  readonly balances: ProvisioningBalances;
  readonly datasources: ProvisioningDatasources;
  readonly webhookTarget: WebhookTargetCheck;
  /**
   * Whether a store error means "no such record" (stores/account-store.ts AccountNotFoundError):
   * provisioning answers it with NOT_FOUND naming what was looked up.
   */
  readonly isNotFound: (err: unknown) => boolean;
}

/** The ids records are stored under are KV key tokens: letters, digits, `-` and `_` (UUIDv7s in practice; the admin API's schemas name the same pattern). */
const RECORD_ID = new RegExp(RECORD_ID_PATTERN);

const CURRENCY = /^[A-Z]{3}$/;
const COUNTRY = /^[A-Z]{2}$/;

/** A balance as shown to operators and the admin API. */
export interface BalanceView {
  readonly organization: string;
  readonly currency: string;
  readonly available: number;
}

export interface NewTokenRequest {
  readonly orgId: string;
  readonly kind: string;
  readonly projectId?: string | null;
  readonly datasourceId?: string | null;
  readonly scopes?: readonly string[];
  readonly name?: string;
}

/** A token as shown to operators and the admin API: never its hash, webhook secret or SMPP password hash. */
export function tokenView(t: Token): Record<string, unknown> {
  return {
    id: t.id, kind: t.kind, name: t.name, organization: t.orgId, project: t.projectId, datasource: t.datasourceId,
    scopes: t.scopes, createdAt: t.createdAt, revokedAt: t.revokedAt,
    webhook: t.webhook ? { url: t.webhook.url } : null, smpp: t.smpp ? { systemId: t.smpp.systemId } : null, numbers: t.numbers,
  };
}

export class Provisioning {
  constructor(private readonly ports: ProvisioningPorts) {}

  /** Reads a record, answering "not found" as NOT_FOUND naming `what` (a malformed id is unknown too). */
  private async found<T>(what: string, id: string, read: () => Promise<T>): Promise<T> {
    if (!RECORD_ID.test(id)) throw new AppError('NOT_FOUND', `${what} ${JSON.stringify(id.slice(0, 64))} not found`);
    try {
      return await read();
    } catch (err) {
      if (this.ports.isNotFound(err)) throw new AppError('NOT_FOUND', `${what} ${id} not found`, { cause: err });
      throw err;
    }
  }

  organization(id: string): Promise<Organization> {
    return this.found('organization', id, () => this.ports.accounts.getOrg(id));
  }

  /** The project, when it belongs to `orgId`; another organization's project is not found. */
  async project(orgId: string, id: string): Promise<Project> {
    const project = await this.found('project', id, () => this.ports.accounts.getProject(id));
    if (project.orgId !== orgId) throw new AppError('NOT_FOUND', `project ${id} not found in organization ${orgId}`);
    return project;
  }

  /** The token, when it belongs to `orgId`. */
  async token(orgId: string, id: string): Promise<Token> {
    const token = await this.found('token', id, () => this.ports.accounts.getToken(id));
    if (token.orgId !== orgId) throw new AppError('NOT_FOUND', `token ${id} not found in organization ${orgId}`);
    return token;
  }

  /** An organization with a zero balance in its currency (so top-ups and charges find one). */
  async createOrganization(input: { name: string; currency?: string; smppEnabled?: boolean }): Promise<Organization> {
    const name = input.name.trim();
    if (name === '') throw validationError({ name: ['must not be empty'] });
    const currency = (input.currency ?? 'EUR').toUpperCase();
    if (!CURRENCY.test(currency)) throw validationError({ currency: [`must be an ISO 4217 code such as EUR, got ${JSON.stringify(input.currency)}`] });
    const org = await this.ports.accounts.createOrg({ name, currency, smppEnabled: input.smppEnabled ?? false });
    await this.ports.balances.set(org.id, { currency: org.currency, availableMicros: 0 });
    return org;
  }

  async createProject(orgId: string, name: string): Promise<Project> {
    await this.organization(orgId);
    if (name.trim() === '') throw validationError({ name: ['must not be empty'] });
    return this.ports.accounts.createProject(orgId, name.trim());
  }

  /**
   * A token; its value is returned once and only its hash is stored. Datasource tokens take the
   * datasource's project; product tokens need known scopes; a legacy token is account-wide.
   */
  async createToken(input: NewTokenRequest): Promise<{ token: Token; value: string }> {
    await this.organization(input.orgId);
    if (!(TOKEN_KINDS as readonly string[]).includes(input.kind)) throw validationError({ kind: [`must be one of ${TOKEN_KINDS.join(', ')}`] });
    const kind = input.kind as TokenKind;
    const scopes = [...new Set(input.scopes ?? [])];
    let projectId = input.projectId ?? null;
    const datasourceId = input.datasourceId ?? null;
    if (kind === 'datasource') {
      if (!datasourceId) throw validationError({ datasource: ['is required for a datasource token'] });
      const ds = await this.found('datasource', datasourceId, () => this.ports.datasources.get(datasourceId));
      if (ds.orgId !== input.orgId) throw new AppError('NOT_FOUND', `datasource ${datasourceId} not found in organization ${input.orgId}`);
      if (projectId && projectId !== ds.projectId) throw validationError({ project: [`datasource ${ds.id} belongs to project ${ds.projectId}, not ${projectId}`] });
      projectId = ds.projectId;
    } else if (datasourceId) {
      throw validationError({ datasource: ['is for datasource tokens only'] });
    }
    if (kind === 'product') {
      if (scopes.length === 0) throw validationError({ scopes: [`a product token needs some of ${PRODUCT_SCOPES.join(', ')}`] });
      const unknown = scopes.filter((s) => !(PRODUCT_SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0) throw validationError({ scopes: [`unknown scope ${unknown.map((s) => JSON.stringify(s.slice(0, 64))).join(', ')}; product scopes are ${PRODUCT_SCOPES.join(', ')}`] });
    } else if (scopes.length > 0) {
      throw validationError({ scopes: ['are for product tokens only'] });
    }
    if (kind === 'legacy') {
      if (projectId) throw validationError({ project: ['a legacy token is account-wide: give no project'] });
    } else {
      if (!projectId) throw validationError({ project: [`is required for a ${kind} token`] });
      await this.project(input.orgId, projectId);
    }
    const name = input.name?.trim();
    return this.ports.accounts.createToken({ kind, orgId: input.orgId, projectId, datasourceId, scopes, ...(name ? { name } : {}) });
  }

  /** Sets the balance to `amount` (in the organization's currency unless given). */
  async setBalance(orgId: string, amount: number, currency?: string): Promise<BalanceView> {
    const org = await this.organization(orgId);
    checkAmount('amount', amount, true);
    const code = (currency ?? org.currency).toUpperCase();
    if (!CURRENCY.test(code)) throw validationError({ currency: [`must be an ISO 4217 code such as EUR, got ${JSON.stringify(currency)}`] });
    const set = await this.ports.balances.set(orgId, { currency: code, availableMicros: toMicros(amount) });
    return view(orgId, set);
  }

  /** Adds funds atomically (safe alongside live traffic); an organization without a balance gets one in its currency first. */
  async topUp(orgId: string, amount: number): Promise<BalanceView> {
    const org = await this.organization(orgId);
    checkAmount('amount', amount, false);
    if (!(await this.ports.balances.get(orgId))) await this.ports.balances.set(orgId, { currency: org.currency, availableMicros: 0 });
    await this.ports.balances.credit(orgId, toMicros(amount));
    const now = await this.ports.balances.get(orgId);
    return view(orgId, now ?? { currency: org.currency, availableMicros: 0 });
  }

  /** The price of one SMS segment (`sms`) or one lookup (`lookup`) to a country. */
  async setPrice(orgId: string, input: { kind: string; country: string; price: number; currency?: string }): Promise<Price> {
    const org = await this.organization(orgId);
    if (input.kind !== 'sms' && input.kind !== 'lookup') throw validationError({ kind: [`must be sms or lookup, got ${JSON.stringify(input.kind.slice(0, 32))}`] });
    const country = input.country.toUpperCase();
    if (!COUNTRY.test(country)) throw validationError({ country: [`must be an ISO 3166 alpha-2 code, got ${JSON.stringify(input.country.slice(0, 32))}`] });
    checkAmount('price', input.price, true);
    const currency = (input.currency ?? org.currency).toUpperCase();
    if (!CURRENCY.test(currency)) throw validationError({ currency: [`must be an ISO 4217 code such as EUR, got ${JSON.stringify(input.currency)}`] });
    return this.ports.accounts.setPrice(orgId, input.kind, country, { country, currency, priceMicros: toMicros(input.price) });
  }

  /**
   * The DLR webhook of an api_sms token of `orgId`: public HTTPS unless private targets are
   * allowed (spec 1 §6 rule 1), checked now; the signing secret is generated when not given.
   */
  async setWebhook(orgId: string, tokenId: string, url: string, secret?: string): Promise<Token> {
    const token = await this.token(orgId, tokenId);
    if (token.kind !== 'api_sms') throw validationError({ token: [`is a ${token.kind} token: webhooks are set on api_sms tokens`] });
    if (token.revokedAt) throw validationError({ token: ['is revoked'] });
    if (secret !== undefined && secret.trim() === '') throw validationError({ secret: ['must not be empty (omit it to have one generated)'] });
    let checked: string;
    try {
      checked = await this.ports.webhookTarget(url);
    } catch (err) {
      if (isWebhookTargetRefused(err)) throw validationError({ url: [`is refused: ${err.reason}`] });
      throw err;
    }
    return this.ports.accounts.setWebhook(token.id, checked, secret);
  }

  async createDatasource(orgId: string, projectId: string, input: { name: string; strict?: boolean }): Promise<Datasource> {
    await this.project(orgId, projectId);
    if (input.name.trim() === '') throw validationError({ name: ['must not be empty'] });
    return this.ports.datasources.create(projectId, input.name.trim(), { strict: input.strict ?? false });
  }
}

function checkAmount(field: string, amount: number, zeroAllowed: boolean): void {
  if (!Number.isFinite(amount) || amount < 0 || (!zeroAllowed && amount === 0) || amount > MAX_AMOUNT) {
    throw validationError({ [field]: [`must be a number ${zeroAllowed ? 'from 0' : 'above 0'} up to ${MAX_AMOUNT}, got ${String(amount)}`] });
  }
}

function view(orgId: string, balance: Balance): BalanceView {
  return { organization: orgId, currency: balance.currency, available: fromMicros(balance.availableMicros) };
}
