// Who gets a token's receipts and inbound messages: its bound receiver and transceiver
// sessions in this process, taken in turn, each with at most `deliverWindow` deliver_sm
// awaiting their response. The token's durable feed is pulled only while it has a receiver
// here; a deliver_sm that finds no session with room waits for one up to the deliver timeout.
import type { Logger } from '../../infra/logger';
import type { Binding, SmppOptions } from './options';
import type { Deliverable, DeliveryResult, FeedSubscription, ReceiptFeed } from './ports';
import type { SmppConnection } from './protocol';
import { STATUS, statusName } from './protocol';
import { inboundPdu, receiptPdu } from './receipts';

/** What the pool needs of a session. */
export interface Receiver {
  readonly conn: SmppConnection;
  readonly binding: Binding | undefined;
  /** Bound as receiver or transceiver, not closing, framing intact. */
  readonly canReceive: boolean;
  /** deliver_sm sent and not yet answered. */
  delivering: number;
}

export class ReceiverPool {
  private readonly receivers = new Map<string, Receiver[]>();
  private readonly roundRobin = new Map<string, number>();
  private readonly feeds = new Map<string, FeedSubscription>();
  private readonly feedStops = new Set<Promise<void>>();
  private readonly capacityWaiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly feed: ReceiptFeed,
    private readonly options: Pick<SmppOptions, 'deliverTimeoutMs' | 'deliverWindow'>,
    private readonly log: Logger,
    private readonly stopping: () => boolean,
  ) {}

  /** Feeds still stopping (for the shutdown log). */
  get stoppingFeeds(): number {
    return this.feedStops.size;
  }

  attach(peer: Receiver, tokenId: string): void {
    const list = this.receivers.get(tokenId) ?? [];
    list.push(peer);
    this.receivers.set(tokenId, list);
    if (!this.feeds.has(tokenId)) this.feeds.set(tokenId, this.feed.open(tokenId, (item) => this.deliver(tokenId, item)));
    this.wake(tokenId);
  }

  /** Takes a session out; the token's feed stops with its last receiver here. */
  detach(peer: Receiver, tokenId: string): void {
    const list = this.receivers.get(tokenId);
    if (!list) return;
    const rest = list.filter((p) => p !== peer);
    if (rest.length > 0) {
      this.receivers.set(tokenId, rest);
      return;
    }
    this.receivers.delete(tokenId);
    const feed = this.feeds.get(tokenId);
    this.feeds.delete(tokenId);
    this.wake(tokenId);
    if (feed) {
      const stopped = feed.stop().catch((err: unknown) => this.log.warn({ err }, 'smpp: receipt feed did not stop cleanly'));
      this.feedStops.add(stopped);
      void stopped.finally(() => this.feedStops.delete(stopped));
    }
  }

  /** Resolves once every feed that was stopping has stopped. */
  async drained(): Promise<void> {
    await Promise.all([...this.feedStops]);
  }

  private wake(tokenId: string): void {
    const waiting = this.capacityWaiters.get(tokenId);
    if (!waiting) return;
    for (const wake of [...waiting]) wake();
  }

  /** A receiver of the token with room in its deliver window; waits for room up to the deliver timeout. */
  private async receiverFor(tokenId: string): Promise<Receiver | undefined> {
    const deadline = performance.now() + this.options.deliverTimeoutMs;
    for (;;) {
      const list = (this.receivers.get(tokenId) ?? []).filter((p) => p.canReceive);
      if (list.length === 0 || this.stopping()) return undefined;
      const start = this.roundRobin.get(tokenId) ?? 0;
      for (let i = 0; i < list.length; i++) {
        const peer = list[(start + i) % list.length];
        if (peer && peer.delivering < this.options.deliverWindow) {
          this.roundRobin.set(tokenId, (start + i + 1) % list.length);
          return peer;
        }
      }
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const waiting = this.capacityWaiters.get(tokenId) ?? new Set<() => void>();
        this.capacityWaiters.set(tokenId, waiting);
        const wake = (): void => {
          clearTimeout(timer);
          waiting.delete(wake);
          if (waiting.size === 0) this.capacityWaiters.delete(tokenId);
          resolve();
        };
        const timer = setTimeout(wake, left);
        waiting.add(wake);
      });
    }
  }

  private async deliver(tokenId: string, item: Deliverable): Promise<DeliveryResult> {
    const peer = await this.receiverFor(tokenId);
    if (!peer?.binding) return 'unavailable';
    const version = peer.binding.version;
    const pdu = item.kind === 'receipt' ? receiptPdu(item, version) : inboundPdu(item, version);
    peer.delivering++;
    try {
      const resp = await peer.conn.request('deliver_sm', pdu, this.options.deliverTimeoutMs);
      if (!resp) return 'unavailable';
      if (resp.status !== STATUS.ESME_ROK) {
        this.log.info({ connection: peer.conn.id, status: statusName(resp.status), kind: item.kind }, 'smpp: client refused a deliver_sm');
        return 'refused';
      }
      return 'ok';
    } finally {
      peer.delivering--;
      this.wake(tokenId);
    }
  }
}
