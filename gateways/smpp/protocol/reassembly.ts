// Reassembly of concatenated parts (UDH or SAR) into one message, for the submit_sm of the
// customer server and the deliver_sm of the carrier connector. Parts are keyed by who sent
// them (a bound system_id, a carrier route), source, destination, reference and part count, so
// parts of one message may arrive on different sessions of the same peer and two messages with
// the same reference to different recipients never mix. A message whose parts do not all arrive
// within the timeout is handed back with what arrived; the caller decides (the server refuses
// the parts, the connector publishes what it has). Pure bookkeeping, no I/O.
import type { ConcatInfo } from './concat';

export interface Part<M, W> {
  readonly concat: ConcatInfo;
  readonly body: Buffer;
  /** Per-part facts the caller needs once the message is complete (fields, data_coding). */
  readonly meta: M;
  /** Who waits for this part's answer (a session and a sequence number). */
  readonly waiter: W;
}

export interface Complete<M, W> {
  /** Parts in sequence order, one per sequence number (a repeated part replaces the earlier one). */
  readonly parts: ReadonlyArray<{ readonly seq: number; readonly body: Buffer; readonly meta: M }>;
  /** Every waiter, including those of repeated parts: each gets the message's answer. */
  readonly waiters: readonly W[];
}

interface Pending<M, W> {
  readonly total: number;
  readonly parts: Map<number, { readonly seq: number; readonly body: Buffer; readonly meta: M }>;
  readonly waiters: W[];
  readonly timer: NodeJS.Timeout;
}

/** The key of one message: its sender (system_id or carrier route), addresses, reference and part count. */
export function concatKey(peer: string, from: string, to: string, concat: ConcatInfo): string {
  return [peer, from, to.replace(/^\+/, ''), concat.ref, concat.total].join('\u0000');
}

export class Reassembler<M, W> {
  private readonly pending = new Map<string, Pending<M, W>>();

  constructor(
    private readonly timeoutMs: number,
    private readonly onExpired: (waiters: readonly W[], received: number, total: number, parts: Complete<M, W>['parts']) => void,
  ) {}

  /** Parts held across all incomplete messages. */
  get heldParts(): number {
    let n = 0;
    for (const p of this.pending.values()) n += p.waiters.length;
    return n;
  }

  get incompleteMessages(): number {
    return this.pending.size;
  }

  /** Adds a part; returns the whole message when this part completes it, else undefined (the part is held). */
  add(key: string, part: Part<M, W>): Complete<M, W> | undefined {
    let entry = this.pending.get(key);
    if (!entry) {
      const timer = setTimeout(() => this.expire(key), this.timeoutMs);
      timer.unref();
      entry = { total: part.concat.total, parts: new Map(), waiters: [], timer };
      this.pending.set(key, entry);
    }
    entry.parts.set(part.concat.seq, { seq: part.concat.seq, body: part.body, meta: part.meta });
    entry.waiters.push(part.waiter);
    if (entry.parts.size < entry.total) return undefined;
    clearTimeout(entry.timer);
    this.pending.delete(key);
    return { parts: [...entry.parts.values()].sort((a, b) => a.seq - b.seq), waiters: entry.waiters };
  }

  /** Drops the waiters matching `gone` (a closed session) from every incomplete message. */
  forget(gone: (waiter: W) => boolean): void {
    for (const entry of this.pending.values()) {
      for (let i = entry.waiters.length - 1; i >= 0; i--) {
        const waiter = entry.waiters[i];
        if (waiter !== undefined && gone(waiter)) entry.waiters.splice(i, 1);
      }
    }
  }

  /** Gives up every incomplete message (shutdown); returns their waiters. */
  clear(): W[] {
    const waiters: W[] = [];
    for (const entry of this.pending.values()) {
      clearTimeout(entry.timer);
      waiters.push(...entry.waiters);
    }
    this.pending.clear();
    return waiters;
  }

  private expire(key: string): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    this.pending.delete(key);
    this.onExpired(entry.waiters, entry.parts.size, entry.total, [...entry.parts.values()].sort((a, b) => a.seq - b.seq));
  }
}
