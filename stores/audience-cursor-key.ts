// The HMAC key of audience cursors (spec 3 §3: stateless, any replica continues a cursor):
// 32 random bytes created once in the `accounts` KV bucket, so every replica of every
// deployment shares it without configuration; a lost key only invalidates live cursors.
import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';

const KEY = 'secret.audience-cursor';

export async function audienceCursorKey(kv: KV): Promise<Buffer> {
  const existing = await kv.get(KEY);
  if (existing && existing.operation === 'PUT' && existing.length > 0) return Buffer.from(existing.string(), 'hex');
  try {
    await kv.create(KEY, randomBytes(32).toString('hex'));
  } catch {
    // Another process created it first; read theirs.
  }
  const created = await kv.get(KEY);
  if (!created || created.length === 0) throw new Error('audience cursor key could not be created');
  return Buffer.from(created.string(), 'hex');
}
