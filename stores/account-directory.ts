// An in-memory mirror of the `accounts` KV bucket, kept current by a KV watch, so that
// authentication and price lookups on hot paths cost no network round trip. A revocation
// written by the admin CLI reaches every replica's mirror within milliseconds.
import type { KV } from '@nats-io/kv';
import { hashToken, sameHash, type Authenticator, type Organization, type Price, type PriceKind, type PriceList, type Principal, type Project, type Token } from '../core/accounts';
import { KEYS } from './account-store';
import { KvMirror } from './kv-mirror';

/** Token values whose hash is remembered (a client sends the same token with every request). */
const MAX_REMEMBERED_HASHES = 10_000;

export class AccountDirectory implements Authenticator, PriceList {
  /** token value → its SHA-256: the hash is the lookup key; the token itself is re-read every time. */
  private readonly hashes = new Map<string, string>();

  private constructor(private readonly mirror: KvMirror) {}

  static async open(kv: KV): Promise<AccountDirectory> {
    return new AccountDirectory(await KvMirror.open(kv));
  }

  stop(): void {
    this.mirror.stop();
  }

  private get<T>(key: string): T | undefined {
    return this.mirror.get<T>(key);
  }

  /** The principal behind a token value, or undefined when unknown, revoked or orphaned. */
  authenticate(value: string): Principal | undefined {
    const remembered = this.hashes.get(value);
    const hash = remembered ?? hashToken(value);
    const id = this.get<string>(KEYS.tokenHash(hash));
    const token = id === undefined ? undefined : this.get<Token>(KEYS.token(id));
    if (!token || token.revokedAt || !sameHash(token.hash, hash)) return undefined;
    const org = this.get<Organization>(KEYS.org(token.orgId));
    if (!org) return undefined;
    // Only tokens that exist are remembered, so unknown values sent by anyone cannot fill the map.
    if (remembered === undefined) {
      if (this.hashes.size >= MAX_REMEMBERED_HASHES) this.hashes.clear();
      this.hashes.set(value, hash);
    }
    return { token, org };
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

  /** Every entry under a key prefix of the accounts bucket (datasource specs, segments). */
  entries<T>(prefix: string): Array<[string, T]> {
    return [...this.mirror.withPrefix<T>(prefix)];
  }

  /** One entry of the accounts bucket by key, for stores that own a key family. */
  entry<T>(key: string): T | undefined {
    return this.get<T>(key);
  }

  prices(orgId: string, kind: PriceKind): Price[] {
    const found = [...this.mirror.withPrefix<Price>(`price.${kind}.${orgId}.`)].map(([, price]) => price);
    return found.sort((a, b) => a.country.localeCompare(b.country));
  }
}
