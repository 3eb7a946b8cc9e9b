// JSON records in a KV bucket, read the one way the account-like stores (accounts,
// datasources) share: a deleted or empty key is no record; a family is listed by its key prefix.
import type { KV } from '@nats-io/kv';

export async function readRecord<T>(kv: KV, key: string): Promise<T | null> {
  const entry = await kv.get(key);
  return entry && entry.operation === 'PUT' && entry.length > 0 ? entry.json<T>() : null;
}

/** Every record under `<prefix>.` (any depth). */
export async function listRecords<T>(kv: KV, prefix: string): Promise<T[]> {
  const keys: string[] = [];
  for await (const key of await kv.keys(`${prefix}.>`)) keys.push(key);
  const values = await Promise.all(keys.map((k) => readRecord<T>(kv, k)));
  return values.filter((v): v is Awaited<T> => v !== null) as T[];
}
