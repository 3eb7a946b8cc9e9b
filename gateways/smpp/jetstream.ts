// The gateway's receipt feed over NATS: one durable JetStream consumer per token,
// `smpp-dlr-<tokenId>`, on `sms.status.<tokenId>` (every status transition, with the message
// and so its receipt request) and `sms.inbound.<tokenId>` (inbound messages for the token's
// numbers). The consumer is created
// at the token's first bind with DeliverPolicy.New, so it holds everything that follows; it is
// pulled only while a receiver or transceiver session of the token is bound in this process,
// and a message is acknowledged only after the client's deliver_sm_resp: receipts wait on the
// stream (7 days) while nobody is bound, and a crash delivers them again (at least once).
import { JetStreamApiError, type JetStreamClient, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { consumeEach, durableConfig } from '../../infra/consumer';
import type { Logger } from '../../infra/logger';
import { CONSUMERS, decode, STREAMS, SUBJECTS, type InboundPayload, type StatusPayload } from '../../core/bus';
import type { Deliverable, DeliveryResult, FeedSubscription, ReceiptFeed } from './ports';
import { receiptWanted } from './receipts';

const DAY_MS = 24 * 3600 * 1000;

export interface ReceiptFeedOptions {
  /** How long a fetched receipt may wait for its deliver_sm_resp before JetStream sends it again. */
  readonly ackWaitMs: number;
  /** Receipts of one token in flight at once. */
  readonly maxAckPending: number;
  /** A consumer nobody pulled from for this long is removed by the server. */
  readonly inactiveMs: number;
  /** Times a client may refuse one deliver_sm (error deliver_sm_resp) before it is dropped. */
  readonly maxRefusals: number;
}

export const DEFAULT_FEED_OPTIONS: ReceiptFeedOptions = { ackWaitMs: 30_000, maxAckPending: 1000, inactiveMs: 7 * DAY_MS, maxRefusals: 10 };

const RETRY_MS = 1000;
const REFUSED_RETRY_MS = 5000;
/** Longest wait for a feed to stop (its in-flight deliver_sm time out on their own). */
const STOP_WAIT_MS = 5000;

export class JetStreamReceipts implements ReceiptFeed {
  private readonly ensured = new Set<string>();

  constructor(
    private readonly nats: { readonly js: JetStreamClient; readonly jsm: JetStreamManager },
    private readonly log: Logger,
    private readonly options: ReceiptFeedOptions = DEFAULT_FEED_OPTIONS,
  ) {}

  async ensure(tokenId: string): Promise<void> {
    if (this.ensured.has(tokenId)) return;
    const name = CONSUMERS.smppDlr(tokenId);
    try {
      await this.nats.jsm.consumers.info(STREAMS.sms.name, name);
    } catch (err) {
      if (!(err instanceof JetStreamApiError)) throw err;
      try {
        await this.nats.jsm.consumers.add(STREAMS.sms.name, durableConfig({
          stream: STREAMS.sms.name,
          name,
          deliver: 'new',
          filterSubjects: [SUBJECTS.smsStatus(tokenId), SUBJECTS.smsInbound(tokenId)],
          maxAckPending: this.options.maxAckPending,
          ackWaitMs: this.options.ackWaitMs,
          inactiveMs: this.options.inactiveMs,
        }));
      } catch (addErr) {
        // Another replica created it between our info and add.
        if (!(addErr instanceof JetStreamApiError)) throw addErr;
        await this.nats.jsm.consumers.info(STREAMS.sms.name, name);
      }
    }
    this.ensured.add(tokenId);
  }

  open(tokenId: string, deliver: (item: Deliverable) => Promise<DeliveryResult>): FeedSubscription {
    /** Per message id, the tail of its chain: one message's receipts go out one after the other. */
    const chains = new Map<string, Promise<void>>();

    const inOrder = (messageId: string, work: () => Promise<void>): Promise<void> => {
      const previous = chains.get(messageId) ?? Promise.resolve();
      const next = previous.then(work, work);
      chains.set(messageId, next);
      void next.finally(() => { if (chains.get(messageId) === next) chains.delete(messageId); });
      return next;
    };

    const settle = (msg: JsMsg, result: DeliveryResult, what: string): void => {
      if (result === 'ok') msg.ack();
      else if (result === 'unavailable') msg.nak(RETRY_MS);
      else if (msg.info.deliveryCount >= this.options.maxRefusals) {
        this.log.warn({ tokenId, what, deliveries: msg.info.deliveryCount }, 'smpp: client keeps refusing a deliver_sm; dropped');
        msg.term('refused by the client');
      } else msg.nak(REFUSED_RETRY_MS);
    };

    const handleStatus = async (msg: JsMsg, event: StatusPayload): Promise<void> => {
      const byId = new Map(event.messages.map((m) => [m.id, m]));
      // Per transition: 'ok' (delivered or not wanted) or the delivery's failure. The receipt
      // request travels in the message itself; one message's receipts go out in order.
      const outcomes = await Promise.all((event.transitions ?? []).map((t) => {
        const message = byId.get(t.messageId);
        const request = message?.source === 'smpp' ? message.receiptRequest : undefined;
        if (!message || !request || !receiptWanted(request.registeredDelivery, t.status)) return Promise.resolve<DeliveryResult>('ok');
        let outcome: DeliveryResult = 'ok';
        return inOrder(t.messageId, async () => {
          outcome = await deliver({ kind: 'receipt', message, transition: t, userMessageReference: request.userMessageReference });
        }).then(() => outcome);
      }));
      settle(msg, outcomes.find((r) => r !== 'ok') ?? 'ok', 'receipt');
    };

    const handleInbound = async (msg: JsMsg, event: InboundPayload): Promise<void> => {
      const results: DeliveryResult[] = [];
      for (const mo of event.inbound) results.push(await deliver({ kind: 'inbound', from: mo.from, to: mo.to, text: mo.text }));
      settle(msg, results.find((r) => r !== 'ok') ?? 'ok', 'inbound');
    };

    const handle = async (msg: JsMsg): Promise<void> => {
      const inbound = msg.subject === SUBJECTS.smsInbound(tokenId);
      let event: { readonly inbound: InboundPayload } | { readonly status: StatusPayload };
      try {
        event = inbound ? { inbound: decode('inbound', msg.data) } : { status: decode('status', msg.data) };
      } catch (err) {
        this.log.error({ err, tokenId, seq: msg.seq }, 'smpp: unreadable receipt feed message; dropped');
        msg.term('unreadable');
        return;
      }
      try {
        if ('inbound' in event) await handleInbound(msg, event.inbound);
        else await handleStatus(msg, event.status);
      } catch (err) {
        this.log.warn({ err, tokenId }, 'smpp: receipt handling failed; will retry');
        msg.nak(RETRY_MS);
      }
    };

    const feed = consumeEach({
      js: this.nats.js, stream: STREAMS.sms.name, durable: CONSUMERS.smppDlr(tokenId), pull: Math.min(256, this.options.maxAckPending), log: this.log, handle,
      onInterrupted: async () => {
        this.ensured.delete(tokenId);
        await this.ensure(tokenId);
      },
    });

    return {
      stop: async () => {
        // In-flight deliver_sm time out on their own; stopping waits a bounded time for them.
        const bounded = (work: Promise<unknown>): Promise<unknown> => Promise.race([work, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
        await bounded(feed.stop());
        await bounded(feed.idle());
      },
    };
  }
}
