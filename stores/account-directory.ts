// An in-memory mirror of the `accounts` KV bucket, kept current by a KV watch, so that
// authentication and price lookups on hot paths cost no network round trip. A revocation
// written by the admin CLI reaches every replica's mirror within milliseconds.
import type { KV } from '@nats-io/kv';
import { hashToken, sameHash } from '../core/accounts/secrets';
import type { Organization, Price, PriceKind, Principal, Project, Token } from '../core/accounts/types';
import { KEYS } from './account-store';

export class AccountDirectory {
  private readonly entries = new Map<string, unknown>();
  private stopWatch: (() => void) | undefined;

  private constructor(private readonly kv: KV) {}

  static async open(kv: KV): Promise<AccountDirectory> {
    const directory = new AccountDirectory(kv);
    await directory.start();
    return directory;
  }

  private async start(): Promise<void> {
    const status = await this.kv.status();
    const watcher = await this.kv.watch();
    this.stopWatch = () => watcher.stop();
    let resolveReady!: () => void;
    const ready = new Promise<void>((resolve) => { resolveReady = resolve; });
    if (status.values === 0) resolveReady();
    void (async () => {
      for await (const entry of watcher) {
        if (entry.operation === 'PUT' && entry.length > 0) {
          try {
            this.entries.set(entry.key, entry.json());
          } catch {
            this.entries.delete(entry.key); // not ours to read; never crash the mirror
          }
        } else {
          this.entries.delete(entry.key);
        }
        if (!entry.isUpdate && entry.delta === 0) resolveReady();
        if (entry.isUpdate) resolveReady();
      }
    })();
    await ready;
  }

  stop(): void {
    this.stopWatch?.();
  }

  private get<T>(key: string): T | undefined {
    return this.entries.get(key) as T | undefined;
  }

  /** The principal behind a token value, or undefined when unknown, revoked or orphaned. */
  authenticate(value: string): Principal | undefined {
    const hash = hashToken(value);
    const id = this.get<string>(KEYS.tokenHash(hash));
    const token = id === undefined ? undefined : this.get<Token>(KEYS.token(id));
    if (!token || token.revokedAt || !sameHash(token.hash, hash)) return undefined;
    const org = this.get<Organization>(KEYS.org(token.orgId));
    return org ? { token, org } : undefined;
  }

  token(id: string): Token | undefined {
    return this.get<Token>(KEYS.token(id));
  }

  org(id: string): Organization | undefined {
    return this.get<Organization>(KEYS.org(id));
  }

  project(id: string): Project | undefined {
    return this.get<Project>(KEYS.project(id));
  }

  tokenBySystemId(systemId: string): Token | undefined {
    const id = this.get<string>(KEYS.smpp(systemId));
    return id === undefined ? undefined : this.token(id);
  }

  tokenByNumber(number: string): Token | undefined {
    const id = this.get<string>(KEYS.number(number));
    return id === undefined ? undefined : this.token(id);
  }

  price(orgId: string, kind: PriceKind, country: string): Price | undefined {
    return this.get<Price>(KEYS.price(kind, orgId, country));
  }

  prices(orgId: string, kind: PriceKind): Price[] {
    const prefix = `price.${kind}.${orgId}.`;
    const found: Price[] = [];
    for (const [key, value] of this.entries) if (key.startsWith(prefix)) found.push(value as Price);
    return found.sort((a, b) => a.country.localeCompare(b.country));
  }
}
