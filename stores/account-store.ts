// Accounts in NATS KV (bucket `accounts`): organizations, projects, tokens and their
// indexes (hash → id, SMPP system_id → id, number → id), price profiles. Written by the
// admin CLI and the demo seed; read on hot paths through AccountDirectory (a watched
// in-memory mirror). Balances live in their own bucket (stores/balance-ledger.ts).
import type { KV } from '@nats-io/kv';
import { newId } from '../core/ids';
import { hashSmppPassword, hashToken, isWhsecSecret, looksLikeToken, newTokenValue, newWebhookSecret, randomAlnum, withRateGrant, type Organization, type Price, type PriceKind, type Project, type Token, type TokenKind, type Webhook, type WebhookSecret } from '../core/accounts';
import { listRecords, readRecord } from './kv-records';

export class AccountNotFoundError extends Error {
  override readonly name = 'AccountNotFoundError';
}

export class AccountConflictError extends Error {
  override readonly name = 'AccountConflictError';
}

export const KEYS = {
  org: (id: string) => `org.${id}`,
  project: (id: string) => `project.${id}`,
  token: (id: string) => `token.${id}`,
  tokenHash: (hash: string) => `tokenhash.${hash}`,
  smpp: (systemId: string) => `smpp.${systemId}`,
  number: (msisdn: string) => `number.${msisdn.replace(/^\+/, '')}`,
  price: (kind: PriceKind, orgId: string, country: string) => `price.${kind}.${orgId}.${country}`,
} as const;

const now = (): string => new Date().toISOString();

/** A given secret with how it keys the HMAC, or a new `whsec_` one. */
const webhookSecret = (secret: string | undefined): Required<WebhookSecret> => (secret === undefined
  ? { secret: newWebhookSecret(), keyFormat: 'whsec' }
  : { secret, keyFormat: isWhsecSecret(secret) ? 'whsec' : 'raw' });

export interface NewToken {
  readonly kind: TokenKind;
  readonly orgId: string;
  readonly projectId?: string | null;
  readonly datasourceId?: string | null;
  readonly scopes?: readonly string[];
  readonly name?: string;
}

export class AccountStore {
  constructor(private readonly kv: KV) {}

  private read<T>(key: string): Promise<T | null> {
    return readRecord<T>(this.kv, key);
  }

  private async write(key: string, value: unknown): Promise<void> {
    await this.kv.put(key, JSON.stringify(value));
  }

  private list<T>(prefix: string): Promise<T[]> {
    return listRecords<T>(this.kv, prefix);
  }

  async createOrg(input: { name: string; currency?: string; smppEnabled?: boolean; id?: string }): Promise<Organization> {
    const org: Organization = { id: input.id ?? newId(), name: input.name, currency: input.currency ?? 'EUR', smppEnabled: input.smppEnabled ?? false, createdAt: now() };
    await this.write(KEYS.org(org.id), org);
    return org;
  }

  async getOrg(id: string): Promise<Organization> {
    const org = await this.read<Organization>(KEYS.org(id));
    if (!org) throw new AccountNotFoundError(`organization ${id} not found`);
    return org;
  }

  listOrgs(): Promise<Organization[]> {
    return this.list<Organization>('org');
  }

  async setOrgSmpp(id: string, smppEnabled: boolean): Promise<Organization> {
    const org = { ...(await this.getOrg(id)), smppEnabled };
    await this.write(KEYS.org(id), org);
    return org;
  }

  async setOrgRateLimit(id: string, endpoint: string, perMinute: number | null): Promise<Organization> {
    const org = await this.getOrg(id);
    const updated: Organization = { ...org, rateLimits: withRateGrant(org.rateLimits, endpoint, perMinute) };
    await this.write(KEYS.org(id), updated);
    return updated;
  }

  async createProject(orgId: string, name: string, id?: string): Promise<Project> {
    await this.getOrg(orgId);
    const project: Project = { id: id ?? newId(), orgId, name, createdAt: now() };
    await this.write(KEYS.project(project.id), project);
    return project;
  }

  async getProject(id: string): Promise<Project> {
    const project = await this.read<Project>(KEYS.project(id));
    if (!project) throw new AccountNotFoundError(`project ${id} not found`);
    return project;
  }

  /** The project timezone (IANA name) of the audience filter (spec 3 §2.4); validated by the caller. */
  async setProjectTimezone(id: string, timezone: string): Promise<Project> {
    const project: Project = { ...(await this.getProject(id)), timezone };
    await this.write(KEYS.project(id), project);
    return project;
  }

  async listProjects(orgId?: string): Promise<Project[]> {
    const all = await this.list<Project>('project');
    return orgId ? all.filter((p) => p.orgId === orgId) : all;
  }

  /** Creates a token; the value is returned once and only its hash is stored. */
  async createToken(input: NewToken): Promise<{ token: Token; value: string }> {
    await this.getOrg(input.orgId);
    const projectId = input.projectId ?? null;
    if (input.kind !== 'legacy' && !projectId) throw new AccountConflictError(`a ${input.kind} token needs a project`);
    if (projectId) {
      const project = await this.getProject(projectId);
      if (project.orgId !== input.orgId) throw new AccountConflictError(`project ${projectId} belongs to another organization`);
    }
    const value = newTokenValue(input.kind);
    const token: Token = {
      id: newId(),
      kind: input.kind,
      name: input.name ?? `${input.kind} token`,
      orgId: input.orgId,
      projectId: input.kind === 'legacy' ? null : projectId,
      datasourceId: input.datasourceId ?? null,
      scopes: [...(input.scopes ?? [])],
      hash: hashToken(value),
      createdAt: now(),
      revokedAt: null,
      webhook: null,
      smpp: null,
      numbers: [],
    };
    await this.write(KEYS.token(token.id), token);
    await this.write(KEYS.tokenHash(token.hash), token.id);
    return { token, value };
  }

  async getToken(id: string): Promise<Token> {
    const token = await this.read<Token>(KEYS.token(id));
    if (!token) throw new AccountNotFoundError(`token ${id} not found`);
    return token;
  }

  /** Accepts either a token id or a token value (as the admin CLI does). */
  async resolveToken(idOrValue: string): Promise<Token> {
    if (!looksLikeToken(idOrValue)) return this.getToken(idOrValue);
    const id = await this.read<string>(KEYS.tokenHash(hashToken(idOrValue)));
    if (!id) throw new AccountNotFoundError('no token has this value');
    return this.getToken(id);
  }

  async listTokens(filter: { orgId?: string; projectId?: string } = {}): Promise<Token[]> {
    const all = await this.list<Token>('token');
    return all.filter((t) => (!filter.orgId || t.orgId === filter.orgId) && (!filter.projectId || t.projectId === filter.projectId));
  }

  async revokeToken(id: string): Promise<Token> {
    const token = await this.getToken(id);
    if (token.revokedAt) return token;
    const revoked: Token = { ...token, revokedAt: now() };
    await this.write(KEYS.token(id), revoked);
    await this.kv.delete(KEYS.tokenHash(token.hash));
    if (token.smpp) await this.kv.delete(KEYS.smpp(token.smpp.systemId));
    for (const number of token.numbers) await this.kv.delete(KEYS.number(number));
    return revoked;
  }

  /** Adds scopes to a product token (those it has stay); the demo seed gives an existing demo token a scope added later. */
  async addTokenScopes(id: string, scopes: readonly string[]): Promise<Token> {
    const token = await this.getToken(id);
    if (token.kind !== 'product') throw new Error(`token ${id} is a ${token.kind} token; scopes are for product tokens`);
    const missing = scopes.filter((s) => !token.scopes.includes(s));
    if (missing.length === 0) return token;
    const updated: Token = { ...token, scopes: [...token.scopes, ...missing] };
    await this.write(KEYS.token(id), updated);
    return updated;
  }

  /**
   * Rotation as spec 1 §5 rule 3 describes it: a replacement with the same kind, project,
   * scopes and webhook is created; the old token stays valid until it is revoked.
   */
  async rotateToken(id: string): Promise<{ token: Token; value: string; replaced: Token }> {
    const old = await this.getToken(id);
    if (old.revokedAt) throw new AccountConflictError(`token ${id} is revoked; create a new one instead`);
    const created = await this.createToken({ kind: old.kind, orgId: old.orgId, projectId: old.projectId, datasourceId: old.datasourceId, scopes: old.scopes, name: old.name });
    const token: Token = { ...created.token, webhook: old.webhook };
    await this.write(KEYS.token(token.id), token);
    return { token, value: created.value, replaced: old };
  }

  /**
   * Sets the webhook URL. A given secret replaces the stored one (a `whsec_<base64>` one is
   * decoded into the key, any other is used as bytes); otherwise the stored one (with its
   * rotation and header settings) is kept, or a new `whsec_` secret is generated.
   */
  async setWebhook(id: string, url: string, secret?: string, options: { legacyHeaders?: boolean } = {}): Promise<Token> {
    const token = await this.getToken(id);
    if (token.kind !== 'api_sms') throw new AccountConflictError('webhooks are configured on api_sms tokens');
    const kept = secret === undefined ? token.webhook : null;
    const webhook: Webhook = kept
      ? { ...kept, url, ...(options.legacyHeaders === undefined ? {} : { legacyHeaders: options.legacyHeaders }) }
      : { url, ...webhookSecret(secret), legacyHeaders: options.legacyHeaders ?? false };
    const updated: Token = { ...token, webhook };
    await this.write(KEYS.token(id), updated);
    return updated;
  }

  /** The automatic reply to HELP/INFO sent to this token's numbers (api_sms); null removes it. */
  async setHelpText(id: string, text: string | null): Promise<Token> {
    const token = await this.getToken(id);
    if (token.kind !== 'api_sms') throw new AccountConflictError('help texts are configured on api_sms tokens');
    const updated: Token = { ...token, helpText: text };
    await this.write(KEYS.token(id), updated);
    return updated;
  }

  /** A new `whsec_` secret; the previous one keeps signing (a second signature) for `overlapSeconds`. */
  async rotateWebhookSecret(id: string, overlapSeconds: number): Promise<Token> {
    const token = await this.getToken(id);
    if (!token.webhook) throw new AccountConflictError(`token ${id} has no webhook: set one first`);
    const { previous: _expired, ...current } = token.webhook;
    const until = new Date(Date.now() + overlapSeconds * 1000).toISOString();
    const previous = overlapSeconds > 0 ? { previous: { secret: current.secret, keyFormat: current.keyFormat ?? 'raw', until } } : {};
    const updated: Token = { ...token, webhook: { ...current, ...webhookSecret(undefined), ...previous } };
    await this.write(KEYS.token(id), updated);
    return updated;
  }

  async clearWebhook(id: string): Promise<Token> {
    const updated: Token = { ...(await this.getToken(id)), webhook: null };
    await this.write(KEYS.token(id), updated);
    return updated;
  }

  /** Issues (or re-issues) the SMPP system_id/password pair of an api_sms token. */
  async issueSmppCredentials(id: string): Promise<{ token: Token; systemId: string; password: string }> {
    const token = await this.getToken(id);
    if (token.kind !== 'api_sms') throw new AccountConflictError('SMPP credentials belong to api_sms tokens');
    if (token.revokedAt) throw new AccountConflictError('the token is revoked');
    const org = await this.getOrg(token.orgId);
    if (!org.smppEnabled) throw new AccountConflictError(`SMPP is not enabled on organization ${org.id}: run \`admin org smpp --org ${org.id} --enable\` first`);
    if (token.smpp) await this.kv.delete(KEYS.smpp(token.smpp.systemId));
    const systemId = token.smpp?.systemId ?? `sms${randomAlnum(10)}`;
    const password = randomAlnum(8);
    const updated: Token = { ...token, smpp: { systemId, passwordHash: hashSmppPassword(password) } };
    await this.write(KEYS.token(id), updated);
    await this.write(KEYS.smpp(systemId), id);
    return { token: updated, systemId, password };
  }

  async revokeSmppCredentials(id: string): Promise<Token> {
    const token = await this.getToken(id);
    if (token.smpp) await this.kv.delete(KEYS.smpp(token.smpp.systemId));
    const updated: Token = { ...token, smpp: null };
    await this.write(KEYS.token(id), updated);
    return updated;
  }

  async addNumber(id: string, number: string): Promise<Token> {
    const token = await this.getToken(id);
    const owner = await this.read<string>(KEYS.number(number));
    if (owner && owner !== id) throw new AccountConflictError(`number ${number} is attached to token ${owner}`);
    const updated: Token = { ...token, numbers: [...new Set([...token.numbers, number])] };
    await this.write(KEYS.token(id), updated);
    await this.write(KEYS.number(number), id);
    return updated;
  }

  async removeNumber(id: string, number: string): Promise<Token> {
    const token = await this.getToken(id);
    const updated: Token = { ...token, numbers: token.numbers.filter((n) => n !== number) };
    await this.write(KEYS.token(id), updated);
    await this.kv.delete(KEYS.number(number));
    return updated;
  }

  async setPrice(orgId: string, kind: PriceKind, country: string, price: Price): Promise<Price> {
    await this.getOrg(orgId);
    await this.write(KEYS.price(kind, orgId, country), price);
    return price;
  }

  async removePrice(orgId: string, kind: PriceKind, country: string): Promise<void> {
    await this.kv.delete(KEYS.price(kind, orgId, country));
  }

  async listPrices(orgId: string, kind: PriceKind): Promise<Price[]> {
    return (await this.list<Price>(`price.${kind}.${orgId}`)).sort((a, b) => a.country.localeCompare(b.country));
  }
}
