// clientId claims in the `idempotency` bucket: a retried send with the same clientId finds the
// message it already created (KV_KEYS.clientIdClaim, a hash of the clientId per scope).
import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import type { ClientIds } from '../core/sms';
import { KV_KEYS } from '../core/bus/names';
import { isRevisionConflict } from '../infra/nats';
import { casKv, type CasEntry, type CasKv } from './kv-cas';

const UTF8 = new TextDecoder();

export class KvClientIds implements ClientIds {
  private readonly cas: CasKv;

  constructor(private readonly kv: KV) {
    this.cas = casKv(kv);
  }

  private key(scope: string, clientId: string): string {
    return KV_KEYS.clientIdClaim(scope, createHash('sha256').update(clientId).digest('hex').slice(0, 40));
  }

  async claim(scope: string, clientId: string, messageId: string): Promise<string | null> {
    const key = this.key(scope, clientId);
    try {
      await this.kv.create(key, messageId);
      return null;
    } catch (err) {
      const entry = await this.kv.get(key);
      if (entry && entry.operation === 'PUT' && entry.length > 0) return entry.string();
      throw err;
    }
  }

  async takeOver(scope: string, clientId: string, heldBy: string, messageId: string): Promise<boolean> {
    const key = this.key(scope, clientId);
    const entry = await this.heldBy(key, heldBy);
    if (!entry) return false;
    try {
      await this.cas.update(key, messageId, entry.revision);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }

  async release(scope: string, clientId: string, messageId: string): Promise<void> {
    const key = this.key(scope, clientId);
    const entry = await this.heldBy(key, messageId);
    if (!entry) return;
    try {
      await this.kv.delete(key, { previousSeq: entry.revision });
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
    }
  }

  /** The claim at `key` when it names `messageId` (with its revision, for a compare-and-set). */
  private async heldBy(key: string, messageId: string): Promise<CasEntry | null> {
    const entry = await this.cas.get(key);
    return entry && UTF8.decode(entry.value) === messageId ? entry : null;
  }
}
