// The carrier simulator (DESIGN §6): an SMPP server (v3.4 and v5.0 binds) that plays an
// upstream SMSC for development and test stacks. It accepts binds with one configured
// system_id/password, answers every submit_sm, and reports on it with delivery receipts
// whose path is chosen by the destination's last two digits (core/carrier/simulator-outcomes,
// printed in docs/carrier.md). Receipts go to the session that submitted, or to any bound
// receiver/transceiver of the same system_id; a receipt nobody acknowledged is sent again, as
// a real SMSC does. Mobile-originated messages are injected on demand through a core NATS
// request on `simulator.mo`. Never enabled in production configs.
import { randomBytes } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { createServer, type PDU, type PduOptions, type Session } from 'smpp';
import { formatReceipt, MESSAGE_STATE } from '../core/carrier/receipt';
import { outcomeFor, type ReceiptStep } from '../core/carrier/simulator-outcomes';
import { SMPP_STATUS } from '../core/errors';
import { toGsm7Bytes, transliterateToGsm7 } from '../core/sms/encoding';
import { inboundPdu } from '../gateways/smpp/receipts';
import type { Logger } from '../infra/logger';

export const SIMULATOR_MO_SUBJECT = 'simulator.mo';

const ESME_RINVBNDSTS = 0x04;
const ESME_RALYBND = 0x05;
const ESME_RINVCMDID = 0x03;
const ESM_DELIVERY_RECEIPT = 0x04;
const SMPP_V34 = 0x34;
const MO_RESPONSE_TIMEOUT_MS = 5000;
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
  stop(): Promise<void>;
}

/** Body of a `simulator.mo` request. */
export interface MoRequest {
  readonly from: string;
  readonly to: string;
  readonly text: string;
}

export type MoReply = { readonly ok: true } | { readonly ok: false; readonly reason: string };

type BindMode = 'transmitter' | 'receiver' | 'transceiver';

interface Peer {
  readonly session: Session;
  mode: BindMode | undefined;
  systemId: string;
  /** Resolvers of deliver_sm sent on this session and not yet answered. */
  readonly awaiting: Set<(resp: PDU | undefined) => void>;
}

interface Receipt {
  readonly systemId: string;
  readonly options: PduOptions;
  /** The session that submitted, preferred when it can still receive. */
  readonly origin: Peer | undefined;
  attempts: number;
}

const BIND_COMMANDS: ReadonlyArray<readonly [string, BindMode]> = [
  ['bind_transmitter', 'transmitter'],
  ['bind_receiver', 'receiver'],
  ['bind_transceiver', 'transceiver'],
];

const canReceive = (peer: Peer): boolean => peer.mode === 'receiver' || peer.mode === 'transceiver';
const canSubmit = (peer: Peer): boolean => peer.mode === 'transmitter' || peer.mode === 'transceiver';

/** The text of a submit_sm as the library decoded it (short_message, else message_payload). */
function submittedText(pdu: PDU): string {
  const read = (field: PDU['short_message']): string => {
    if (field === undefined) return '';
    if (typeof field === 'string') return field;
    if (Buffer.isBuffer(field)) return field.toString('latin1');
    return typeof field.message === 'string' ? field.message : field.message.toString('latin1');
  };
  const short = read(pdu.short_message);
  return short !== '' ? short : read(pdu.message_payload);
}

/** An address as SMPP fields: digits with TON 1/NPI 1, anything else alphanumeric (TON 5). */
export async function startCarrierSimulator(opts: SimulatorOptions): Promise<CarrierSimulator> {
  const { log } = opts;
  const peers = new Set<Peer>();
  const timers = new Set<NodeJS.Timeout>();
  const backlog: Receipt[] = [];
  const sent = new Map<string, Receipt[]>();
  let stopping = false;
  let nextMo = 0;

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopping) fn();
    }, ms);
    timers.add(timer);
  };

  const sendDeliver = (peer: Peer, options: PduOptions): Promise<PDU | undefined> =>
    new Promise((resolve) => {
      const settle = (resp: PDU | undefined): void => {
        if (!peer.awaiting.delete(settle)) return;
        resolve(resp);
      };
      peer.awaiting.add(settle);
      if (!peer.session.deliver_sm(options, settle)) settle(undefined);
    });

  const receiverFor = (systemId: string, preferred: Peer | undefined): Peer | undefined => {
    if (preferred && peers.has(preferred) && canReceive(preferred)) return preferred;
    for (const peer of peers) if (peer.systemId === systemId && canReceive(peer)) return peer;
    return undefined;
  };

  const deliverReceipt = async (receipt: Receipt): Promise<boolean> => {
    const peer = receiverFor(receipt.systemId, receipt.origin);
    if (!peer) {
      if (backlog.length < BACKLOG_MAX) backlog.push(receipt);
      return false;
    }
    receipt.attempts++;
    const resp = await sendDeliver(peer, receipt.options);
    if (resp?.command_status === SMPP_STATUS.ESME_ROK) return true;
    if (resp === undefined) {
      // The session went away before answering: keep it for the next bind.
      if (!stopping && backlog.length < BACKLOG_MAX) backlog.push(receipt);
    } else if (receipt.attempts < RECEIPT_MAX_ATTEMPTS) {
      later(RECEIPT_RETRY_MS, () => void deliverReceipt(receipt));
    } else {
      log.warn({ receiptedMessageId: receipt.options.receipted_message_id, status: resp.command_status }, 'simulator: receipt refused too often; dropped');
    }
    return false;
  };

  const flushBacklog = (systemId: string): void => {
    const waiting = backlog.filter((r) => r.systemId === systemId);
    if (waiting.length === 0) return;
    for (let i = backlog.length - 1; i >= 0; i--) if (backlog[i]?.systemId === systemId) backlog.splice(i, 1);
    for (const receipt of waiting) void deliverReceipt(receipt);
  };

  const remember = (id: string, receipt: Receipt): void => {
    const list = sent.get(id);
    if (list) list.push(receipt);
    else sent.set(id, [receipt]);
    while (sent.size > REMEMBERED_MESSAGES) {
      const oldest = sent.keys().next().value;
      if (oldest === undefined) break;
      sent.delete(oldest);
    }
  };

  const scheduleReceipts = (peer: Peer, pdu: PDU, messageId: string, steps: readonly ReceiptStep[]): void => {
    const submitted = new Date();
    const excerpt = transliterateToGsm7([...submittedText(pdu)].slice(0, 20).join(''));
    // registered_delivery 1: every receipt; 2: failures only (SMPP v3.4 §5.2.17).
    const wanted = (pdu.registered_delivery ?? 0) & 0x03;
    steps.forEach((step, i) => {
      if (wanted === 0 || (wanted === 2 && (step.state === 'DELIVRD' || step.state === 'ENROUTE' || step.state === 'ACCEPTD'))) return;
      later(opts.latencyMs * (i + 1), () => {
        const text = formatReceipt({ id: messageId, submitted, done: new Date(), state: step.state, err: step.err, text: excerpt });
        const receipt: Receipt = {
          systemId: peer.systemId,
          origin: peer,
          attempts: 0,
          options: {
            source_addr_ton: pdu.dest_addr_ton ?? 1,
            source_addr_npi: pdu.dest_addr_npi ?? 1,
            source_addr: pdu.destination_addr ?? '',
            dest_addr_ton: pdu.source_addr_ton ?? 0,
            dest_addr_npi: pdu.source_addr_npi ?? 0,
            destination_addr: pdu.source_addr ?? '',
            esm_class: ESM_DELIVERY_RECEIPT,
            data_coding: 0,
            short_message: toGsm7Bytes(text),
            receipted_message_id: messageId,
            message_state: MESSAGE_STATE[step.state],
          },
        };
        remember(messageId, receipt);
        void deliverReceipt(receipt);
      });
    });
  };

  const onSubmit = (peer: Peer, pdu: PDU): void => {
    if (!canSubmit(peer)) {
      peer.session.send(pdu.response({ command_status: ESME_RINVBNDSTS }));
      return;
    }
    const outcome = outcomeFor(pdu.destination_addr ?? '');
    if (outcome.submitStatus !== SMPP_STATUS.ESME_ROK) {
      peer.session.send(pdu.response({ command_status: outcome.submitStatus }));
      return;
    }
    const messageId = randomBytes(8).toString('hex');
    peer.session.send(pdu.response({ message_id: messageId }));
    scheduleReceipts(peer, pdu, messageId, outcome.receipts);
  };

  const onBind = (peer: Peer, pdu: PDU, mode: BindMode): void => {
    if (peer.mode) {
      peer.session.send(pdu.response({ command_status: ESME_RALYBND }));
      return;
    }
    if (pdu.system_id !== opts.systemId || pdu.password !== opts.password) {
      log.warn({ systemId: pdu.system_id }, 'simulator: bind refused (wrong credentials)');
      peer.session.send(pdu.response({ command_status: SMPP_STATUS.ESME_RINVPASWD }), () => peer.session.close());
      return;
    }
    peer.mode = mode;
    peer.systemId = opts.systemId;
    // Answer in the version the client asked for: 0x50 for v5.0, 0x34 for v3.4 and older.
    const version = (pdu.interface_version ?? 0x34) >= 0x50 ? 0x50 : 0x34;
    peer.session.send(pdu.response({ system_id: 'SIMULATOR', sc_interface_version: version }));
    log.debug({ mode, version }, 'simulator: session bound');
    if (canReceive(peer)) flushBacklog(peer.systemId);
  };

  const handled = new Set(['enquire_link', 'unbind', 'submit_sm', ...BIND_COMMANDS.map(([command]) => command)]);

  const server = createServer((session) => {
    const peer: Peer = { session, mode: undefined, systemId: '', awaiting: new Set() };
    peers.add(peer);
    session.on('error', (err) => log.debug({ err }, 'simulator: session error'));
    session.on('close', () => {
      peers.delete(peer);
      for (const settle of [...peer.awaiting]) settle(undefined);
    });
    for (const [command, mode] of BIND_COMMANDS) session.on(command, (pdu) => onBind(peer, pdu, mode));
    session.on('enquire_link', (pdu) => session.send(pdu.response()));
    session.on('unbind', (pdu) => {
      peer.mode = undefined;
      session.send(pdu.response(), () => session.close());
    });
    session.on('submit_sm', (pdu) => onSubmit(peer, pdu));
    session.on('pdu', (pdu) => {
      if (!pdu.isResponse() && !handled.has(pdu.command) && pdu.command !== 'deliver_sm') {
        session.send(pdu.response({ command_status: ESME_RINVCMDID }));
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error({ err }, 'simulator: server error'));
  const bound = server.address();
  const port = typeof bound === 'object' && bound ? bound.port : opts.port;

  const sendMo = async (request: MoRequest): Promise<MoReply> => {
    const receivers = [...peers].filter(canReceive);
    const peer = receivers[nextMo++ % Math.max(1, receivers.length)];
    if (!peer) return { ok: false, reason: 'no receiver or transceiver session is bound' };
    // The same deliver_sm our SMPP gateway sends for an inbound message (message_payload past 254 octets).
    const options = inboundPdu(request, SMPP_V34);
    let timer: NodeJS.Timeout | undefined;
    const resp = await Promise.race([
      sendDeliver(peer, options),
      new Promise<'timeout'>((resolve) => { timer = setTimeout(() => resolve('timeout'), MO_RESPONSE_TIMEOUT_MS); }),
    ]);
    clearTimeout(timer);
    if (resp === 'timeout') return { ok: false, reason: 'deliver_sm was not answered in time' };
    if (resp === undefined) return { ok: false, reason: 'the session closed before answering' };
    if (resp.command_status !== SMPP_STATUS.ESME_ROK) return { ok: false, reason: `deliver_sm_resp command_status 0x${resp.command_status.toString(16)}` };
    return { ok: true };
  };

  let subscription: Subscription | undefined;
  if (opts.nats) {
    subscription = opts.nats.subscribe(opts.moSubject ?? SIMULATOR_MO_SUBJECT, {
      callback: (err: Error | null, msg: Msg) => {
        if (err) {
          log.warn({ err }, 'simulator: MO subscription error');
          return;
        }
        void (async () => {
          let reply: MoReply;
          try {
            const request = msg.json<MoRequest>();
            if (typeof request.from !== 'string' || typeof request.to !== 'string' || typeof request.text !== 'string') reply = { ok: false, reason: 'from, to and text are required strings' };
            else reply = await sendMo(request);
          } catch (e) {
            reply = { ok: false, reason: e instanceof Error ? e.message : String(e) };
          }
          msg.respond(JSON.stringify(reply));
        })();
      },
    });
  }

  log.info({ port, latencyMs: opts.latencyMs }, 'carrier simulator listening');

  return {
    port,
    redeliver: async (carrierMessageId) => {
      const receipts = sent.get(carrierMessageId) ?? [];
      const results = [];
      for (const receipt of receipts) {
        const peer = receiverFor(receipt.systemId, receipt.origin);
        results.push(peer ? (await sendDeliver(peer, receipt.options))?.command_status === SMPP_STATUS.ESME_ROK : false);
      }
      return results.filter(Boolean).length;
    },
    stop: async () => {
      stopping = true;
      subscription?.unsubscribe();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const peer of peers) peer.session.destroy();
      await closed;
      log.info({ port }, 'carrier simulator stopped');
    },
  };
}
