// The lifecycle's records in NATS KV: message states written by compare-and-set (bucket
// `messages`), dead-lettered DLRs (`dead_dlrs`) and once-only keys (`idempotency`).
import type { KV } from '@nats-io/kv';
import { decode } from '../core/bus/decode';
import { KV_KEYS } from '../core/bus/names';
import type { DeadDlr } from '../core/sms/dlr';
import type { DeadLetters, LifecycleStates, OnceKeys, VersionedMessage } from '../core/sms/lifecycle-ports';
import type { SmsMessage } from '../core/sms/message';
import { isRevisionConflict } from '../infra/nats';

export class KvLifecycleStates implements LifecycleStates {
  constructor(private readonly kv: KV) {}

  async read(messageId: string): Promise<VersionedMessage | null> {
    const entry = await this.kv.get(KV_KEYS.messageState(messageId));
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
    return { message: decode('messageState', entry.value), revision: entry.revision };
  }

  async replace(message: SmsMessage, revision: number): Promise<boolean> {
    try {
      await this.kv.update(KV_KEYS.messageState(message.id), JSON.stringify(message), revision);
      return true;
    } catch (err) {
      if (isRevisionConflict(err)) return false;
      throw err;
    }
  }
}

export class KvDeadLetters implements DeadLetters {
  constructor(private readonly kv: KV) {}

  async put(dead: DeadDlr): Promise<void> {
    await this.kv.put(KV_KEYS.deadDlr(dead.tokenId, dead.messageId, dead.seq), JSON.stringify(dead));
  }
}

export class KvOnceKeys implements OnceKeys {
  constructor(private readonly kv: KV) {}

  async claim(key: string, value: string): Promise<boolean> {
    try {
      await this.kv.create(key, value);
      return true;
    } catch {
      return false;
    }
  }
}
