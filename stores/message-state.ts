// The current state of recent messages and lookups in the `messages` KV bucket (read-your-
// writes for GET by id at KV speed; DESIGN §3a), clientId claims in `idempotency`, the
// accepted-message queue on JetStream, and opt-outs (a watched mirror of `optouts`).
import { createHash } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { decode } from '../core/bus/decode';
import type { CurrentReader } from '../core/sms/history-ports';
import type { SmsMessage } from '../core/sms/message';
import type { AcceptedQueue, ClientIds, MessageStates, OptOutRecorder, OptOuts } from '../core/sms/ports';
import { KV_KEYS, SUBJECTS } from '../core/bus/names';
import { KvMirror } from './kv-mirror';

export class KvMessageStates implements MessageStates, CurrentReader<SmsMessage> {
  constructor(private readonly kv: KV) {}

  async putAll(messages: readonly SmsMessage[]): Promise<void> {
    await Promise.all(messages.map((m) => this.kv.put(KV_KEYS.messageState(m.id), JSON.stringify(m))));
  }

  async get(id: string): Promise<SmsMessage | null> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return null;
    const entry = await this.kv.get(KV_KEYS.messageState(id));
    return entry && entry.operation === 'PUT' && entry.length > 0 ? decode('messageState', entry.value) : null;
  }
}

export class KvClientIds implements ClientIds {
  constructor(private readonly kv: KV) {}

  private key(scope: string, clientId: string): string {
    return `${scope}.${createHash('sha256').update(clientId).digest('hex').slice(0, 40)}`;
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

  async release(scope: string, clientId: string): Promise<void> {
    await this.kv.delete(this.key(scope, clientId));
  }
}

export class JetStreamAcceptedQueue implements AcceptedQueue {
  constructor(private readonly js: JetStreamClient) {}

  async enqueue(messages: readonly SmsMessage[]): Promise<void> {
    const first = messages[0];
    if (!first) return;
    // msgID makes a retried publish of the same batch a no-op within the duplicate window.
    await this.js.publish(SUBJECTS.smsAccepted, JSON.stringify({ messages }), { msgID: `accepted-${first.id}` });
  }
}

export class MirroredOptOuts implements OptOuts, OptOutRecorder {
  private constructor(private readonly kv: KV, private readonly mirror: KvMirror) {}

  static async open(kv: KV): Promise<MirroredOptOuts> {
    return new MirroredOptOuts(kv, await KvMirror.open(kv));
  }

  static key(projectId: string, number: string): string {
    return KV_KEYS.optOut(projectId, number);
  }

  isOptedOut(projectId: string, number: string): Promise<boolean> {
    return Promise.resolve(this.mirror.has(MirroredOptOuts.key(projectId, number)));
  }

  async optOut(projectId: string, number: string, at: string): Promise<void> {
    await this.kv.put(MirroredOptOuts.key(projectId, number), JSON.stringify({ at }));
  }

  stop(): void {
    this.mirror.stop();
  }
}
