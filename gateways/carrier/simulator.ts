// The carrier simulator (DESIGN §6): an SMPP server (v3.4 and v5.0 binds) that plays an
// upstream SMSC for development and test stacks. It accepts binds with one configured
// system_id/password, answers every submit_sm, and reports on it with delivery receipts
// whose path is chosen by the destination's last two digits (core/carrier/simulator-outcomes,
// printed in docs/carrier.md). Receipts go to the session that submitted, or to any bound
// receiver/transceiver of the same system_id; a receipt nobody acknowledged is sent again, as
// a real SMSC does. Mobile-originated messages are injected on demand through a core NATS
// request on `simulator.mo` (./simulator-mo.ts). Never enabled in production configs.
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { createServer, type PduOptions, type Session } from 'smpp';
import { SUBJECTS } from '../../core/bus/names';
import { formatReceipt, MESSAGE_STATE, type ReceiptStep } from '../../core/carrier';
import { toGsm7Bytes, transliterateToGsm7 } from '../../core/sms';
import type { Logger } from '../../infra/logger';
import { inboundPdu } from '../smpp';
import { concatenationOf, decodeLenient, STATUS, TLV, type SubmitSm } from '../smpp/protocol';
import { serveMoRequests, type MoReply, type MoRequest } from './simulator-mo';
import { SimulatorSession, type SimulatorContext } from './simulator-session';

export const SIMULATOR_MO_SUBJECT = SUBJECTS.simulatorMo;
export type { MoReply, MoRequest } from './simulator-mo';

const ESM_DELIVERY_RECEIPT = 0x04;
const SMPP_V34 = 0x34;
const MO_RESPONSE_TIMEOUT_MS = 5000;
/** A receipt's deliver_sm unanswered this long counts as undelivered (kept for the next bind). */
const RECEIPT_RESPONSE_TIMEOUT_MS = 60_000;
const RECEIPT_RETRY_MS = 1000;
const RECEIPT_MAX_ATTEMPTS = 10;
/** Receipts kept for redeliver() and for binds that come later; the oldest go first. */
const REMEMBERED_MESSAGES = 10_000;
const BACKLOG_MAX = 100_000;

export interface SimulatorOptions {
  readonly port: number;
  readonly host?: string;
  /** Delay before each receipt (submit → first receipt → next receipt); 0 for benchmarks. */
  readonly latencyMs: number;
  readonly systemId: string;
  readonly password: string;
  /** When given, MO messages can be injected with a request on `moSubject`. */
  readonly nats?: NatsConnection;
  /** Subject of MO requests; default `simulator.mo` (tests use their own). */
  readonly moSubject?: string;
  readonly log: Logger;
}

export interface CarrierSimulator {
  readonly port: number;
  /**
   * Sends again every receipt already sent for this message_id, as an SMSC does when it missed
   * the deliver_sm_resp; resolves with how many were acknowledged.
   */
  redeliver(carrierMessageId: string): Promise<number>;
  /**
   * Receipts not yet answered: scheduled, in flight (deliver_sm sent, no resp yet) or waiting
   * for a bind. Read-only; at 0 the simulator sends nothing more on its own.
   */
  pendingReceipts(): number;
  stop(): Promise<void>;
}

interface Receipt {
  readonly systemId: string;
  readonly options: PduOptions;
  /** The session that submitted, preferred when it can still receive. */
  readonly origin: SimulatorSession | undefined;
  attempts: number;
}

/** The text of a submit_sm, for the receipt's `text:` excerpt. */
function submittedText(submit: SubmitSm): string {
  const payload = submit.tlvs.get(TLV.message_payload);
  const body = submit.shortMessage.length > 0 || !payload ? submit.shortMessage : payload;
  const concatenation = concatenationOf(body, submit.esmClass, submit.tlvs);
  return decodeLenient(concatenation.kind === 'invalid' ? body : concatenation.content, submit.dataCoding);
}

class Simulator implements SimulatorContext {
  readonly sessions = new Set<SimulatorSession>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly backlog: Receipt[] = [];
  private readonly sent = new Map<string, Receipt[]>();
  private delivering = 0;
  private stopping = false;
  private nextMo = 0;

  constructor(private readonly opts: SimulatorOptions, readonly log: Logger) {}

  get systemId(): string {
    return this.opts.systemId;
  }

  get password(): string {
    return this.opts.password;
  }

  get pendingReceipts(): number {
    return this.timers.size + this.delivering + this.backlog.length;
  }

  opened(session: Session): void {
    this.sessions.add(new SimulatorSession(session, this));
  }

  closed(session: SimulatorSession): void {
    this.sessions.delete(session);
  }

  bound(session: SimulatorSession): void {
    if (!session.canReceive) return;
    const waiting = this.backlog.filter((r) => r.systemId === session.systemId);
    if (waiting.length === 0) return;
    for (let i = this.backlog.length - 1; i >= 0; i--) if (this.backlog[i]?.systemId === session.systemId) this.backlog.splice(i, 1);
    for (const receipt of waiting) void this.deliverReceipt(receipt);
  }

  submitted(session: SimulatorSession, submit: SubmitSm, messageId: string, steps: readonly ReceiptStep[]): void {
    const submittedAt = new Date();
    const excerpt = transliterateToGsm7([...submittedText(submit)].slice(0, 20).join(''));
    // registered_delivery 1: every receipt; 2: failures only (SMPP v3.4 §5.2.17).
    const wanted = submit.registeredDelivery & 0x03;
    steps.forEach((step, i) => {
      if (wanted === 0 || (wanted === 2 && (step.state === 'DELIVRD' || step.state === 'ENROUTE' || step.state === 'ACCEPTD'))) return;
      this.later(this.opts.latencyMs * (i + 1), () => {
        const text = formatReceipt({ id: messageId, submitted: submittedAt, done: new Date(), state: step.state, err: step.err, text: excerpt });
        const receipt: Receipt = {
          systemId: session.systemId,
          origin: session,
          attempts: 0,
          options: {
            source_addr_ton: submit.destAddrTon,
            source_addr_npi: submit.destAddrNpi,
            source_addr: submit.destinationAddr,
            dest_addr_ton: submit.sourceAddrTon,
            dest_addr_npi: submit.sourceAddrNpi,
            destination_addr: submit.sourceAddr,
            esm_class: ESM_DELIVERY_RECEIPT,
            data_coding: 0,
            short_message: toGsm7Bytes(text),
            receipted_message_id: messageId,
            message_state: MESSAGE_STATE[step.state],
          },
        };
        this.remember(messageId, receipt);
        void this.deliverReceipt(receipt);
      });
    });
  }

  async redeliver(carrierMessageId: string): Promise<number> {
    let acknowledged = 0;
    for (const receipt of this.sent.get(carrierMessageId) ?? []) {
      const session = this.receiverFor(receipt.systemId, receipt.origin);
      if (session && (await session.deliver(receipt.options, RECEIPT_RESPONSE_TIMEOUT_MS))?.status === STATUS.ESME_ROK) acknowledged++;
    }
    return acknowledged;
  }

  async sendMo(request: MoRequest): Promise<MoReply> {
    const receivers = [...this.sessions].filter((s) => s.canReceive);
    const session = receivers[this.nextMo++ % Math.max(1, receivers.length)];
    if (!session) return { ok: false, reason: 'no receiver or transceiver session is bound' };
    // The same deliver_sm our SMPP gateway sends for an inbound message (message_payload past 254 octets).
    const resp = await session.deliver(inboundPdu(request, SMPP_V34), MO_RESPONSE_TIMEOUT_MS);
    if (resp === undefined) return { ok: false, reason: session.conn.isClosed ? 'the session closed before answering' : 'deliver_sm was not answered in time' };
    if (resp.status !== STATUS.ESME_ROK) return { ok: false, reason: `deliver_sm_resp command_status 0x${resp.status.toString(16)}` };
    return { ok: true };
  }

  stop(): void {
    this.stopping = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const session of this.sessions) session.conn.destroy();
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.stopping) fn();
    }, ms);
    this.timers.add(timer);
  }

  private receiverFor(systemId: string, preferred: SimulatorSession | undefined): SimulatorSession | undefined {
    if (preferred && this.sessions.has(preferred) && preferred.canReceive) return preferred;
    for (const session of this.sessions) if (session.systemId === systemId && session.canReceive) return session;
    return undefined;
  }

  private async deliverReceipt(receipt: Receipt): Promise<void> {
    const session = this.receiverFor(receipt.systemId, receipt.origin);
    if (!session) {
      if (this.backlog.length < BACKLOG_MAX) this.backlog.push(receipt);
      return;
    }
    receipt.attempts++;
    this.delivering++;
    const resp = await session.deliver(receipt.options, RECEIPT_RESPONSE_TIMEOUT_MS).finally(() => this.delivering--);
    if (resp?.status === STATUS.ESME_ROK) return;
    if (resp === undefined) {
      // The session went away before answering: keep it for the next bind.
      if (!this.stopping && this.backlog.length < BACKLOG_MAX) this.backlog.push(receipt);
    } else if (receipt.attempts < RECEIPT_MAX_ATTEMPTS) {
      this.later(RECEIPT_RETRY_MS, () => void this.deliverReceipt(receipt));
    } else {
      this.log.warn({ receiptedMessageId: receipt.options.receipted_message_id, status: resp.status }, 'simulator: receipt refused too often; dropped');
    }
  }

  private remember(id: string, receipt: Receipt): void {
    const list = this.sent.get(id);
    if (list) list.push(receipt);
    else this.sent.set(id, [receipt]);
    while (this.sent.size > REMEMBERED_MESSAGES) {
      const oldest = this.sent.keys().next().value;
      if (oldest === undefined) break;
      this.sent.delete(oldest);
    }
  }
}

export async function startCarrierSimulator(opts: SimulatorOptions): Promise<CarrierSimulator> {
  const { log } = opts;
  const simulator = new Simulator(opts, log);
  const server = createServer((session) => simulator.opened(session));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error({ err }, 'simulator: server error'));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const subscription: Subscription | undefined = opts.nats ? serveMoRequests(opts.nats, opts.moSubject ?? SIMULATOR_MO_SUBJECT, (request) => simulator.sendMo(request), log) : undefined;
  log.info({ port, latencyMs: opts.latencyMs }, 'carrier simulator listening');

  return {
    port,
    redeliver: (carrierMessageId) => simulator.redeliver(carrierMessageId),
    pendingReceipts: () => simulator.pendingReceipts,
    stop: async () => {
      subscription?.unsubscribe();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      simulator.stop();
      await closed;
      log.info({ port }, 'carrier simulator stopped');
    },
  };
}
