// The carrier connector: keeps one long-lived SMPP bind_transceiver per upstream SMSC route,
// submits the messages handed over on `carrier.submit` (a durable JetStream pull consumer),
// and turns what the SMSCs report into `carrier.events` (submitted, submit_failed, receipt)
// and `carrier.inbound` (mobile-originated messages). Contract: core/carrier/types.ts;
// behaviour and tables: docs/carrier.md.
//
// Delivery guarantees: a carrier.submit message is acknowledged only after every segment's
// outcome event is on the stream; a deliver_sm is answered only after its event is on the
// stream, so a crash makes the SMSC send it again. Events carry msgIDs, so repeats within the
// stream's duplicate window are stored once.
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { connect, type PDU, type PduOptions, type Session } from 'smpp';
import { defaultErr, parseReceipt, stateOfMessageState } from '../core/carrier/receipt';
import type { CarrierEvent, CarrierInbound, CarrierSubmit, ReceiptState } from '../core/carrier/types';
import { concatRef, deliveredBody, ESM_UDHI, isReceipt, parseConcatUdh, withConcatUdh } from '../gateways/smpp/protocol';
import { SMPP_STATUS } from '../core/errors';
import { splitSegments, toGsm7Bytes, toUcs2Bytes } from '../core/sms/encoding';
import type { CarrierRoute } from '../config';
import type { Logger } from '../infra/logger';
import { STREAMS, SUBJECTS, type Nats } from '../infra/nats';

export const CONNECTOR_CONSUMER = 'carrier-connector';

/** Outstanding carrier.submit messages of this consumer (each may hold several segments). */
const MAX_ACK_PENDING = 2000;
const ACK_WAIT_MS = 60_000;
const WORKING_EVERY_MS = 20_000;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;
const ENQUIRE_LINK_EVERY_MS = 30_000;
const ENQUIRE_LINK_TIMEOUT_MS = 10_000;
const BIND_TIMEOUT_MS = 10_000;
const SUBMIT_RESPONSE_TIMEOUT_MS = 30_000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 10_000;
const UNBIND_TIMEOUT_MS = 1000;
const LOOKUP_ATTEMPTS = 4;
const LOOKUP_RETRY_MS = 250;
const REASSEMBLY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 3000;
const RECENT_IDS = 100_000;
const NAK_DELAY_MS = 1000;

const ESME_RX_T_APPN = 0x64;
const ESME_RINVDCS = SMPP_STATUS.ESME_RINVDCS;
const TON_ALPHANUMERIC = 5;

export interface ConnectorOptions {
  readonly routes: readonly CarrierRoute[];
  readonly nats: Nats;
  readonly log: Logger;
  /** Durable consumer name; default `carrier-connector`. */
  readonly consumer?: string;
  /** Subject consumed; default `carrier.submit`. */
  readonly subject?: string;
}

export interface CarrierConnector {
  stop(): Promise<void>;
}

/** What carrierIds holds for `<route>.<carrier message id>`. */
export interface CarrierIdEntry {
  readonly messageId: string;
  readonly segment: number;
  readonly segments: number;
}

// ---------------------------------------------------------------------------------------------
// Pure helpers (unit-tested)

/** The route with the longest prefix matching the destination's digits ('' matches all). */
export function pickRoute(routes: readonly CarrierRoute[], to: string): CarrierRoute | undefined {
  const digits = to.replace(/\D/g, '');
  let best: { route: CarrierRoute; length: number } | undefined;
  for (const route of routes) {
    for (const prefix of route.prefixes) {
      if (digits.startsWith(prefix) && (!best || prefix.length > best.length)) best = { route, length: prefix.length };
    }
  }
  return best?.route;
}

/** carrierIds key: the route, then the SMSC's id with every byte outside [A-Za-z0-9_-] as =XX. */
export function carrierIdKey(route: string, carrierMessageId: string): string {
  let safe = '';
  for (const byte of Buffer.from(carrierMessageId, 'utf8')) {
    const ch = String.fromCharCode(byte);
    safe += /[A-Za-z0-9_-]/.test(ch) ? ch : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${route}.${safe || '=00'}`;
}

/** One submit_sm per segment: UDH-concatenated when there is more than one. */
export function submitPdus(submit: Pick<CarrierSubmit, 'messageId' | 'from' | 'to' | 'text' | 'encoding'>): PduOptions[] {
  const gsm = submit.encoding === 'GSM-7';
  const segments = splitSegments(submit.text, submit.encoding).map((part) => (gsm ? toGsm7Bytes(part) : toUcs2Bytes(part)));
  const bodies = withConcatUdh(segments, concatRef(submit.messageId));
  const numeric = /^\+?\d+$/.test(submit.from);
  return bodies.map((body) => ({
    source_addr_ton: numeric ? 1 : TON_ALPHANUMERIC,
    source_addr_npi: numeric ? 1 : 0,
    source_addr: numeric ? submit.from.replace(/^\+/, '') : submit.from,
    dest_addr_ton: 1,
    dest_addr_npi: 1,
    destination_addr: submit.to.replace(/\D/g, ''),
    esm_class: bodies.length > 1 ? ESM_UDHI : 0,
    registered_delivery: 1,
    data_coding: gsm ? 0 : 8,
    short_message: body,
  }));
}

export { deliveredBody, isReceipt };

/** '+digits' for a numeric address, the address itself for an alphanumeric one. */
export function normalizeAddress(addr: string, ton: number | undefined): string {
  if (ton === TON_ALPHANUMERIC || !/^\+?\d+$/.test(addr)) return addr;
  return `+${addr.replace(/^\+/, '')}`;
}

/**
 * Stable id of an inbound message: the route and a hash of sender, recipient, text and the
 * minute it arrived. A deliver_sm sent again (new sequence_number) in the same minute maps to
 * the same id and is stored once.
 */
export function inboundId(route: string, from: string, to: string, text: string, at: Date): string {
  const minute = at.toISOString().slice(0, 16);
  const hash = createHash('sha256').update([from, to, text, minute].join('\u0000')).digest('hex').slice(0, 32);
  return `${route}-${hash}`;
}

// ---------------------------------------------------------------------------------------------
// One bind to one SMSC

type SubmitResult =
  | { readonly kind: 'accepted'; readonly carrierMessageId: string; readonly recorded: Promise<void> }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unavailable'; readonly reason: string };

class StopError extends Error {
  override readonly name = 'StopError';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

class Bind {
  private session: Session | undefined;
  private bound = false;
  private inFlight = 0;
  /** Segments waiting for a window slot, in arrival order; called with true when given one. */
  private readonly waiters = new Set<(granted: boolean) => void>();
  private readonly outstanding = new Set<(result: SubmitResult) => void>();
  private reconnectMs = RECONNECT_MIN_MS;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private enquireTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private interrupted = false;
  private unreachableReported = false;
  private readonly log: Logger;

  constructor(
    readonly route: CarrierRoute,
    log: Logger,
    private readonly onDeliver: (route: CarrierRoute, pdu: PDU) => Promise<number>,
  ) {
    this.log = log.child({ carrier: route.name });
  }

  start(): void {
    this.open();
  }

  private open(): void {
    if (this.stopped) return;
    const session = connect({ host: this.route.host, port: this.route.port });
    this.session = session;
    const bindTimer = setTimeout(() => {
      this.log.warn('carrier: bind not answered in time; reconnecting');
      session.destroy();
    }, BIND_TIMEOUT_MS);
    session.on('error', (err) => this.log.debug({ err }, 'carrier: session error'));
    session.on('close', () => {
      clearTimeout(bindTimer);
      this.closed(session);
    });
    session.on('connect', () => {
      session.bind_transceiver({ system_id: this.route.systemId, password: this.route.password, interface_version: 0x34 }, (resp) => {
        clearTimeout(bindTimer);
        if (resp.command_status !== SMPP_STATUS.ESME_ROK) {
          this.log.error({ status: resp.command_status }, 'carrier: bind refused');
          session.close();
          return;
        }
        this.bound = true;
        this.reconnectMs = RECONNECT_MIN_MS;
        this.log.info({ host: this.route.host, port: this.route.port }, 'carrier: bound');
        this.enquireTimer = setInterval(() => this.enquireLink(session), ENQUIRE_LINK_EVERY_MS);
        this.wake();
      });
    });
    session.on('deliver_sm', (pdu) => {
      void this.onDeliver(this.route, pdu).then((status) => session.send(pdu.response({ command_status: status })));
    });
    session.on('enquire_link', (pdu) => session.send(pdu.response()));
    session.on('unbind', (pdu) => session.send(pdu.response(), () => session.close()));
  }

  private enquireLink(session: Session): void {
    const watchdog = setTimeout(() => {
      this.log.warn('carrier: enquire_link not answered; reconnecting');
      session.destroy();
    }, ENQUIRE_LINK_TIMEOUT_MS);
    if (!session.enquire_link({}, () => clearTimeout(watchdog))) clearTimeout(watchdog);
  }

  private closed(session: Session): void {
    if (this.session !== session) return;
    const wasBound = this.bound;
    this.session = undefined;
    this.bound = false;
    clearInterval(this.enquireTimer);
    for (const fail of [...this.outstanding]) fail({ kind: 'unavailable', reason: 'connection lost' });
    if (this.stopped) return;
    if (wasBound) this.log.warn('carrier: connection lost; reconnecting');
    else if (!this.unreachableReported) this.log.warn({ host: this.route.host, port: this.route.port }, 'carrier: cannot bind to the SMSC; retrying with backoff');
    this.unreachableReported = !wasBound;
    const delay = this.reconnectMs;
    this.reconnectMs = Math.min(this.reconnectMs * 2, RECONNECT_MAX_MS);
    this.reconnectTimer = setTimeout(() => this.open(), delay);
  }

  /** Frees a window slot, handing it straight to the longest waiting segment if any. */
  private release(): void {
    const next = this.bound && !this.stopped && !this.interrupted ? this.waiters.values().next().value : undefined;
    if (next) next(true);
    else this.inFlight--;
  }

  /** Gives free slots to waiters (bind up), or turns every waiter away (stop). */
  private wake(): void {
    if (this.stopped || this.interrupted) {
      for (const waiter of [...this.waiters]) waiter(false);
      return;
    }
    while (this.bound && this.inFlight < this.route.window) {
      const next = this.waiters.values().next().value;
      if (!next) break;
      this.inFlight++;
      next(true);
    }
  }

  /** Takes a window slot on a live bind, waiting in line for one; false when stopping. */
  private slot(): Promise<boolean> {
    if (this.stopped || this.interrupted) return Promise.resolve(false);
    if (this.bound && this.inFlight < this.route.window && this.waiters.size === 0) {
      this.inFlight++;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const settle = (granted: boolean): void => {
        this.waiters.delete(settle);
        resolve(granted);
      };
      this.waiters.add(settle);
    });
  }

  /** Segments waiting for a slot give up, and new ones do not wait (the role is stopping). */
  interrupt(): void {
    this.interrupted = true;
    for (const waiter of [...this.waiters]) waiter(false);
  }

  /**
   * Sends one submit_sm. `onAccepted` runs synchronously inside the response callback, before
   * the session reads its next PDU, so a receipt right behind the response finds its record.
   */
  async submit(options: PduOptions, onAccepted: (carrierMessageId: string) => Promise<void>): Promise<SubmitResult> {
    if (!(await this.slot())) return { kind: 'unavailable', reason: 'stopping' };
    const session = this.session;
    if (!session) {
      this.release();
      return { kind: 'unavailable', reason: 'not bound' };
    }
    return new Promise<SubmitResult>((resolve) => {
      const finish = (result: SubmitResult): void => {
        if (!this.outstanding.delete(finish)) return;
        clearTimeout(timer);
        this.release();
        resolve(result);
      };
      this.outstanding.add(finish);
      const timer = setTimeout(() => finish({ kind: 'unavailable', reason: 'submit_sm_resp timeout' }), SUBMIT_RESPONSE_TIMEOUT_MS);
      const sent = session.submit_sm(options, (resp) => {
        if (resp.command_status === SMPP_STATUS.ESME_ROK && resp.message_id) {
          finish({ kind: 'accepted', carrierMessageId: resp.message_id, recorded: onAccepted(resp.message_id) });
        } else {
          finish({ kind: 'refused', status: resp.command_status === SMPP_STATUS.ESME_ROK ? SMPP_STATUS.ESME_RSYSERR : resp.command_status });
        }
      });
      if (!sent) finish({ kind: 'unavailable', reason: 'socket not writable' });
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.enquireTimer);
    this.wake();
    const session = this.session;
    if (!session) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => session.destroy(), UNBIND_TIMEOUT_MS);
      session.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (!this.bound || !session.unbind({}, () => session.close())) session.destroy();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The role

interface Reassembly {
  readonly parts: Map<number, string>;
  readonly total: number;
  readonly waiting: Array<(status: number) => void>;
  readonly timer: NodeJS.Timeout;
}

export async function startCarrierConnector(opts: ConnectorOptions): Promise<CarrierConnector> {
  const { nats, log } = opts;
  const consumerName = opts.consumer ?? CONNECTOR_CONSUMER;
  const subject = opts.subject ?? SUBJECTS.carrierSubmit;
  const abort = new AbortController();
  // Every segment waiting to retry listens for the stop.
  setMaxListeners(0, abort.signal);
  /** Records being written for fresh carrier ids (KV put + submitted event). */
  const recording = new Map<string, Promise<void>>();
  /** Entries this process recorded lately: most receipts come back to the bind that submitted. */
  const recent = new Map<string, CarrierIdEntry>();
  const remember = (key: string, entry: CarrierIdEntry): void => {
    recent.set(key, entry);
    if (recent.size > RECENT_IDS) recent.delete(recent.keys().next().value ?? key);
  };
  /** Receipts of one carrier id are published in the order they arrived. */
  const receiptChains = new Map<string, Promise<unknown>>();
  const reassembly = new Map<string, Reassembly>();

  const publish = async (subj: string, payload: CarrierEvent | CarrierInbound, msgID: string): Promise<void> => {
    await nats.js.publish(subj, JSON.stringify(payload), { msgID });
  };

  /** Retries a write until it succeeds; a write that can not be lost must not fail the caller. */
  const persist = async (what: string, write: () => Promise<unknown>): Promise<void> => {
    let wait = RETRY_MIN_MS;
    for (;;) {
      try {
        await write();
        return;
      } catch (err) {
        if (abort.signal.aborted) throw new StopError(`stopped while writing ${what}`, { cause: err });
        log.warn({ err, what }, 'carrier: write failed; retrying');
        await sleep(wait, abort.signal);
        wait = Math.min(wait * 2, RETRY_MAX_MS);
      }
    }
  };

  // ---- submissions

  const submitSegment = async (bind: Bind, submit: CarrierSubmit, options: PduOptions, segment: number, segments: number): Promise<boolean> => {
    const route = bind.route.name;
    let wait = RETRY_MIN_MS;
    while (!abort.signal.aborted) {
      const result = await bind.submit(options, (carrierMessageId) => {
        const key = carrierIdKey(route, carrierMessageId);
        const entry: CarrierIdEntry = { messageId: submit.messageId, segment, segments };
        const event: CarrierEvent = { kind: 'submitted', messageId: submit.messageId, segment, segments, carrier: route, carrierMessageId, at: new Date().toISOString() };
        const work = (async () => {
          await persist('carrierIds', () => nats.kv.carrierIds.put(key, JSON.stringify(entry)));
          remember(key, entry);
          await persist('submitted event', () => publish(SUBJECTS.carrierEvents, event, `${route}:${carrierMessageId}:submitted`));
        })();
        recording.set(key, work);
        void work.catch(() => undefined).finally(() => recording.delete(key));
        return work;
      });
      if (result.kind === 'accepted') {
        await result.recorded;
        return true;
      }
      if (result.kind === 'refused' && result.status !== SMPP_STATUS.ESME_RTHROTTLED) {
        const event: CarrierEvent = {
          kind: 'submit_failed', messageId: submit.messageId, segment, segments, carrier: route,
          commandStatus: result.status, reason: `submit_sm_resp command_status 0x${result.status.toString(16).padStart(8, '0')}`, at: new Date().toISOString(),
        };
        await persist('submit_failed event', () => publish(SUBJECTS.carrierEvents, event, `${route}:${submit.messageId}:${segment}:submit_failed`));
        return true;
      }
      // Throttled, or no bind right now: the segment waits and goes again, it never fails.
      if (result.kind === 'unavailable') log.debug({ carrier: route, reason: result.reason }, 'carrier: segment waits for the bind');
      await sleep(wait, abort.signal);
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    }
    return false;
  };

  const failAll = async (submit: CarrierSubmit, segments: number, carrier: string, commandStatus: number | null, reason: string): Promise<void> => {
    await Promise.all(Array.from({ length: segments }, (_, segment) => {
      const event: CarrierEvent = { kind: 'submit_failed', messageId: submit.messageId, segment, segments, carrier, commandStatus, reason, at: new Date().toISOString() };
      return persist('submit_failed event', () => publish(SUBJECTS.carrierEvents, event, `${carrier}:${submit.messageId}:${segment}:submit_failed`));
    }));
  };

  const binds = new Map(opts.routes.map((route) => [route.name, new Bind(route, log, (r, pdu) => onDeliver(r, pdu))]));

  /** True when every segment has its outcome event on the stream. */
  const handleSubmit = async (submit: CarrierSubmit): Promise<boolean> => {
    const route = pickRoute(opts.routes, submit.to);
    let pdus: PduOptions[] | undefined;
    try {
      pdus = submitPdus(submit);
    } catch (err) {
      log.error({ err, messageId: submit.messageId }, 'carrier: text cannot be encoded as declared');
    }
    const segments = pdus?.length ?? (Number.isInteger(submit.segments) && submit.segments > 0 ? submit.segments : 1);
    if (pdus && pdus.length !== submit.segments) log.warn({ messageId: submit.messageId, split: pdus.length, given: submit.segments }, 'carrier: segment count differs from the hand-off; using the split');
    if (!route) {
      await failAll(submit, segments, 'none', null, 'no route');
      return true;
    }
    if (!pdus) {
      await failAll(submit, segments, route.name, ESME_RINVDCS, 'text cannot be encoded as declared');
      return true;
    }
    const bind = binds.get(route.name);
    if (!bind) throw new Error(`no bind for route ${route.name}`);
    const done = await Promise.all(pdus.map((options, segment) => submitSegment(bind, submit, options, segment, segments)));
    return done.every(Boolean);
  };

  const onMessage = async (msg: JsMsg): Promise<void> => {
    let submit: CarrierSubmit;
    try {
      submit = msg.json<CarrierSubmit>();
      if (typeof submit.messageId !== 'string' || typeof submit.to !== 'string' || typeof submit.text !== 'string') throw new TypeError('not a CarrierSubmit');
    } catch (err) {
      log.error({ err, seq: msg.seq }, 'carrier: unreadable carrier.submit message dropped');
      msg.term();
      return;
    }
    const working = setInterval(() => msg.working(), WORKING_EVERY_MS);
    try {
      if (await handleSubmit(submit)) msg.ack();
      else msg.nak();
    } catch (err) {
      if (!(err instanceof StopError)) log.error({ err, messageId: submit.messageId }, 'carrier: submission failed; will be retried');
      msg.nak(NAK_DELAY_MS);
    } finally {
      clearInterval(working);
    }
  };

  // ---- receipts and inbound messages

  const lookup = async (route: string, ids: readonly string[]): Promise<{ id: string; entry: CarrierIdEntry } | undefined> => {
    for (let attempt = 0; attempt < LOOKUP_ATTEMPTS; attempt++) {
      for (const id of ids) {
        const key = carrierIdKey(route, id);
        await recording.get(key)?.catch(() => undefined);
        const known = recent.get(key);
        if (known) return { id, entry: known };
        const found = await nats.kv.carrierIds.get(key);
        if (found && found.operation === 'PUT') return { id, entry: found.json<CarrierIdEntry>() };
      }
      if (attempt + 1 < LOOKUP_ATTEMPTS) await sleep(LOOKUP_RETRY_MS, abort.signal);
    }
    return undefined;
  };

  const serialize = <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = receiptChains.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    receiptChains.set(key, next);
    void next.catch(() => undefined).finally(() => {
      if (receiptChains.get(key) === next) receiptChains.delete(key);
    });
    return next;
  };

  const handleReceipt = async (route: CarrierRoute, pdu: PDU): Promise<void> => {
    const parsed = parseReceipt(deliveredBody(pdu).text);
    const tlvState = pdu.message_state === undefined ? undefined : stateOfMessageState(pdu.message_state);
    const state: ReceiptState | undefined = tlvState ?? parsed.state;
    const ids = [...new Set([pdu.receipted_message_id, parsed.id].filter((id): id is string => Boolean(id)))];
    if (!state || ids.length === 0) {
      log.warn({ carrier: route.name, ids, state }, 'carrier: receipt without an id or a state; acknowledged and ignored');
      return;
    }
    await serialize(`${route.name}.${ids[0] ?? ''}`, async () => {
      const found = await lookup(route.name, ids);
      if (!found) {
        log.warn({ carrier: route.name, carrierMessageId: ids[0], state }, 'carrier: receipt for an unknown carrier message id; acknowledged and ignored');
        return;
      }
      const event: CarrierEvent = {
        kind: 'receipt', messageId: found.entry.messageId, segment: found.entry.segment, segments: found.entry.segments,
        carrier: route.name, carrierMessageId: found.id, state, err: parsed.err ?? defaultErr(state), at: new Date().toISOString(),
      };
      await publish(SUBJECTS.carrierEvents, event, `${route.name}:${found.id}:${state}`);
    });
  };

  const publishInbound = async (route: CarrierRoute, from: string, to: string, text: string): Promise<void> => {
    const now = new Date();
    const id = inboundId(route.name, from, to, text, now);
    const inbound: CarrierInbound = { carrier: route.name, from, to, text, at: now.toISOString(), inboundId: id };
    await publish(SUBJECTS.carrierInbound, inbound, id);
  };

  /** Parts of a concatenated MO are answered together, once the whole text is published. */
  const handlePart = (route: CarrierRoute, from: string, to: string, text: string, concat: { ref: number; total: number; seq: number }): Promise<number> =>
    new Promise((resolve) => {
      const key = [route.name, from, to, concat.ref, concat.total].join('|');
      let entry = reassembly.get(key);
      const complete = async (): Promise<void> => {
        const current = reassembly.get(key);
        if (!current) return;
        reassembly.delete(key);
        clearTimeout(current.timer);
        const joined = Array.from({ length: current.total }, (_, i) => current.parts.get(i + 1) ?? '').join('');
        let status: number = SMPP_STATUS.ESME_ROK;
        try {
          await publishInbound(route, from, to, joined);
        } catch (err) {
          log.warn({ err, carrier: route.name }, 'carrier: inbound message not published; the SMSC will send it again');
          status = ESME_RX_T_APPN;
        }
        for (const answer of current.waiting) answer(status);
      };
      if (!entry) {
        entry = { parts: new Map(), total: concat.total, waiting: [], timer: setTimeout(() => void complete(), REASSEMBLY_TIMEOUT_MS) };
        reassembly.set(key, entry);
      }
      entry.parts.set(concat.seq, text);
      entry.waiting.push(resolve);
      if (entry.parts.size >= entry.total) void complete();
    });

  const onDeliver = async (route: CarrierRoute, pdu: PDU): Promise<number> => {
    try {
      if (isReceipt(pdu)) {
        await handleReceipt(route, pdu);
        return SMPP_STATUS.ESME_ROK;
      }
      const body = deliveredBody(pdu);
      const from = normalizeAddress(pdu.source_addr ?? '', pdu.source_addr_ton);
      const to = normalizeAddress(pdu.destination_addr ?? '', pdu.dest_addr_ton);
      const concat = body.udh ? parseConcatUdh(body.udh) : undefined;
      if (concat && concat.total > 1) return await handlePart(route, from, to, body.text, concat);
      await publishInbound(route, from, to, body.text);
      return SMPP_STATUS.ESME_ROK;
    } catch (err) {
      log.warn({ err, carrier: route.name }, 'carrier: deliver_sm not recorded; answered with a temporary error so the SMSC sends it again');
      return ESME_RX_T_APPN;
    }
  };

  // ---- start

  await nats.jsm.consumers.add(STREAMS.carrier.name, {
    durable_name: consumerName,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: subject,
    max_ack_pending: MAX_ACK_PENDING,
    ack_wait: ACK_WAIT_MS * 1_000_000,
  });
  const consumer = await nats.js.consumers.get(STREAMS.carrier.name, consumerName);
  for (const bind of binds.values()) bind.start();
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 500 });
  const inFlight = new Set<Promise<void>>();
  const loop = (async () => {
    for await (const msg of messages) {
      const work = onMessage(msg);
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    }
  })().catch((err: unknown) => log.error({ err }, 'carrier: consumer stopped'));

  log.info({ routes: opts.routes.map((r) => ({ name: r.name, host: r.host, port: r.port, prefixes: r.prefixes, window: r.window })), consumer: consumerName }, 'carrier connector running');

  return {
    stop: async () => {
      await messages.close();
      await loop;
      abort.abort();
      for (const bind of binds.values()) bind.interrupt();
      // Submissions waiting for a bind give up at once; one waiting for its submit_sm_resp gets
      // a moment, then the unbind cuts it short and its message is redelivered later.
      const settled = Promise.allSettled([...inFlight]);
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
      for (const entry of reassembly.values()) {
        clearTimeout(entry.timer);
        for (const answer of entry.waiting) answer(ESME_RX_T_APPN);
      }
      reassembly.clear();
      await Promise.all([...binds.values()].map((bind) => bind.stop()));
      await settled;
      log.info('carrier connector stopped');
    },
  };
}
