// An in-memory copy of a KV bucket kept current by a watch: reads cost no round trip, and
// writes made anywhere reach every process's copy within milliseconds.
import type { KV } from '@nats-io/kv';

export class KvMirror {
  private readonly entries = new Map<string, unknown>();
  private stopWatch: (() => void) | undefined;

  private constructor(private readonly kv: KV) {}

  static async open(kv: KV): Promise<KvMirror> {
    const mirror = new KvMirror(kv);
    await mirror.start();
    return mirror;
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
            this.entries.delete(entry.key); // not JSON: not ours to read; never crash the mirror
          }
        } else {
          this.entries.delete(entry.key);
        }
        if (entry.isUpdate || entry.delta === 0) resolveReady();
      }
    })();
    await ready;
  }

  stop(): void {
    this.stopWatch?.();
  }

  get<T>(key: string): T | undefined {
    return this.entries.get(key) as T | undefined;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  *withPrefix<T>(prefix: string): Iterable<[string, T]> {
    for (const [key, value] of this.entries) if (key.startsWith(prefix)) yield [key, value as T];
  }
}
