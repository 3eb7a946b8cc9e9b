// deliver_sm from an SMSC → carrier.events (receipts) and carrier.inbound (mobile-originated
// messages). A deliver_sm is answered only once its event is on the stream (ESME_RX_T_APPN
// otherwise, so the SMSC sends it again). Receipts of one carrier id are published in the order
// they arrived; the parts of a concatenated MO are reassembled (the SMPP package's Reassembler)
// and answered together once the whole text is published.
import type { PDU } from 'smpp';
import { defaultErr, parseReceipt, stateOfMessageState, type CarrierEvent, type CarrierInbound, type ReceiptState } from '../../core/carrier';
import type { CarrierRoute } from '../../config';
import type { Logger } from '../../infra/logger';
import { concatKey, deliveredBody, isReceipt, parseConcatUdh, Reassembler, STATUS, type ConcatInfo } from '../smpp/protocol';
import type { CarrierWriter } from './events';
import { inboundId, normalizeAddress } from './rules';

const REASSEMBLY_TIMEOUT_MS = 60_000;
const NO_BYTES = Buffer.alloc(0);

/** Answers one part's deliver_sm with a command status. */
type Answer = (status: number) => void;

/** One part of a concatenated MO; its text travels as meta, because the smpp package decoded it. */
interface PartMeta {
  readonly route: CarrierRoute;
  readonly from: string;
  readonly to: string;
  readonly text: string;
}

export class CarrierDeliveries {
  private readonly receiptChains = new Map<string, Promise<unknown>>();
  private readonly parts: Reassembler<PartMeta, Answer>;

  constructor(private readonly writer: CarrierWriter, private readonly log: Logger) {
    // An MO whose parts do not all arrive is published with what came: a handset's text is not dropped.
    this.parts = new Reassembler<PartMeta, Answer>(REASSEMBLY_TIMEOUT_MS, (waiters, _received, _total, parts) => {
      const first = parts[0]?.meta;
      if (first) void this.publishJoined(first, parts.map((p) => p.meta.text).join(''), waiters);
    });
  }

  /** The command status that answers this deliver_sm. */
  async onDeliver(route: CarrierRoute, pdu: PDU): Promise<number> {
    try {
      if (isReceipt(pdu)) {
        await this.handleReceipt(route, pdu);
        return STATUS.ESME_ROK;
      }
      const body = deliveredBody(pdu);
      const from = normalizeAddress(pdu.source_addr ?? '', pdu.source_addr_ton);
      const to = normalizeAddress(pdu.destination_addr ?? '', pdu.dest_addr_ton);
      const concat = body.udh ? parseConcatUdh(body.udh) : undefined;
      if (concat && concat.total > 1) return await this.handlePart(route, from, to, body.text, concat);
      await this.publishInbound(route, from, to, body.text);
      return STATUS.ESME_ROK;
    } catch (err) {
      this.log.warn({ err, carrier: route.name }, 'carrier: deliver_sm not recorded; answered with a temporary error so the SMSC sends it again');
      return STATUS.ESME_RX_T_APPN;
    }
  }

  /** Stopping: the held parts are answered with a temporary error; the SMSC sends them again. */
  stop(): void {
    for (const answer of this.parts.clear()) answer(STATUS.ESME_RX_T_APPN);
  }

  private async handleReceipt(route: CarrierRoute, pdu: PDU): Promise<void> {
    const parsed = parseReceipt(deliveredBody(pdu).text);
    const tlvState = pdu.message_state === undefined ? undefined : stateOfMessageState(pdu.message_state);
    const state: ReceiptState | undefined = tlvState ?? parsed.state;
    const ids = [...new Set([pdu.receipted_message_id, parsed.id].filter((id): id is string => Boolean(id)))];
    if (!state || ids.length === 0) {
      this.log.warn({ carrier: route.name, ids, state }, 'carrier: receipt without an id or a state; acknowledged and ignored');
      return;
    }
    await this.serialize(`${route.name}.${ids[0] ?? ''}`, async () => {
      const found = await this.writer.lookup(route.name, ids);
      if (!found) {
        this.log.warn({ carrier: route.name, carrierMessageId: ids[0], state }, 'carrier: receipt for an unknown carrier message id; acknowledged and ignored');
        return;
      }
      const event: CarrierEvent = {
        kind: 'receipt', messageId: found.entry.messageId, segment: found.entry.segment, segments: found.entry.segments,
        carrier: route.name, carrierMessageId: found.id, state, err: parsed.err ?? defaultErr(state), at: new Date().toISOString(),
      };
      await this.writer.publishEvent(event, `${route.name}:${found.id}:${state}`);
    });
  }

  private serialize<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.receiptChains.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.receiptChains.set(key, next);
    void next.catch(() => undefined).finally(() => {
      if (this.receiptChains.get(key) === next) this.receiptChains.delete(key);
    });
    return next;
  }

  private async publishInbound(route: CarrierRoute, from: string, to: string, text: string): Promise<void> {
    const now = new Date();
    const id = inboundId(route.name, from, to, text, now);
    const inbound: CarrierInbound = { carrier: route.name, from, to, text, at: now.toISOString(), inboundId: id };
    await this.writer.publishInbound(inbound);
  }

  /** Parts of a concatenated MO are answered together, once the whole text is published. */
  private handlePart(route: CarrierRoute, from: string, to: string, text: string, concat: ConcatInfo): Promise<number> {
    return new Promise((resolve) => {
      const meta: PartMeta = { route, from, to, text };
      const complete = this.parts.add(concatKey(route.name, from, to, concat), { concat, body: NO_BYTES, meta, waiter: resolve });
      if (complete) void this.publishJoined(meta, complete.parts.map((p) => p.meta.text).join(''), complete.waiters);
    });
  }

  private async publishJoined(part: PartMeta, text: string, waiters: readonly Answer[]): Promise<void> {
    let status: number = STATUS.ESME_ROK;
    try {
      await this.publishInbound(part.route, part.from, part.to, text);
    } catch (err) {
      this.log.warn({ err, carrier: part.route.name }, 'carrier: inbound message not published; the SMSC will send it again');
      status = STATUS.ESME_RX_T_APPN;
    }
    for (const answer of waiters) answer(status);
  }
}
