// Opt-outs per project in the `optouts` bucket: the list the admin CLI and the console edit,
// and the watched mirror every process that checks sends reads (no round trip per send).
import type { KV } from '@nats-io/kv';
import type { OptOutEntry, OptOutList, OptOutRecorder, OptOuts, OptOutSource } from '../core/sms';
import { KV_KEYS } from '../core/bus/names';
import { KvMirror } from './kv-mirror';

/** What an opt-out key holds (entries written before 2026-11-26 carry `at` alone: a keyword). */
interface StoredOptOut {
  readonly at: string;
  readonly source?: OptOutSource;
  readonly keyword?: string;
}

/**
 * Opt-outs per project in the `optouts` bucket (KV_KEYS.optOut). The list and removals read the
 * bucket itself, so an answer reflects the writes made just before it (the admin CLI uses this
 * class alone; processes that check sends use MirroredOptOuts).
 */
export class KvOptOutList implements OptOutRecorder, OptOutList {
  constructor(protected readonly kv: KV) {}

  static key(projectId: string, number: string): string {
    return KV_KEYS.optOut(projectId, number);
  }

  async optOut(projectId: string, number: string, at: string, source: OptOutSource = 'keyword', keyword?: string): Promise<void> {
    const value: StoredOptOut = keyword === undefined ? { at, source } : { at, source, keyword };
    await this.kv.put(KvOptOutList.key(projectId, number), JSON.stringify(value));
  }

  async optIn(projectId: string, number: string): Promise<boolean> {
    const key = KvOptOutList.key(projectId, number);
    const entry = await this.kv.get(key);
    if (!entry || entry.operation !== 'PUT' || entry.length === 0) return false;
    await this.kv.delete(key);
    return true;
  }

  async list(projectId: string, page: { readonly start: number; readonly limit: number }): Promise<OptOutEntry[]> {
    const prefix = `${projectId}.`;
    const keys: string[] = [];
    for await (const key of await this.kv.keys(`${prefix}*`)) keys.push(key);
    keys.sort();
    const entries = await Promise.all(keys.slice(page.start, page.start + page.limit).map(async (key): Promise<OptOutEntry | null> => {
      const entry = await this.kv.get(key);
      if (!entry || entry.operation !== 'PUT' || entry.length === 0) return null;
      let stored: StoredOptOut;
      try {
        stored = entry.json<StoredOptOut>();
      } catch {
        return null;
      }
      const base = { number: `+${key.slice(prefix.length)}`, since: stored.at, source: stored.source ?? 'keyword' } as const;
      return stored.keyword === undefined ? base : { ...base, keyword: stored.keyword };
    }));
    return entries.filter((e): e is OptOutEntry => e !== null);
  }
}

/** The opt-outs with sends checked against a watched mirror of the bucket (no round trip per send). */
export class MirroredOptOuts extends KvOptOutList implements OptOuts {
  private constructor(kv: KV, private readonly mirror: KvMirror) {
    super(kv);
  }

  static async open(kv: KV): Promise<MirroredOptOuts> {
    return new MirroredOptOuts(kv, await KvMirror.open(kv));
  }

  isOptedOut(projectId: string, number: string): boolean {
    return this.mirror.has(KvOptOutList.key(projectId, number));
  }

  stop(): void {
    this.mirror.stop();
  }
}
