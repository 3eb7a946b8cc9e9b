// One long-lived bind_transceiver to one upstream SMSC (a carrier route): connects, binds,
// keeps the link alive with enquire_link, reconnects with backoff, and submits segments within
// the route's window (segments beyond it wait in line). What the SMSC delivers (receipts,
// mobile-originated messages) is handed to `onDeliver`, whose status answers the deliver_sm.
import { connect, type PDU, type PduOptions, type Session } from 'smpp';
import type { CarrierRoute } from '../../config';
import type { Logger } from '../../infra/logger';
import { STATUS } from '../smpp/protocol';

const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;
const ENQUIRE_LINK_EVERY_MS = 30_000;
const ENQUIRE_LINK_TIMEOUT_MS = 10_000;
const BIND_TIMEOUT_MS = 10_000;
const SUBMIT_RESPONSE_TIMEOUT_MS = 30_000;
const UNBIND_TIMEOUT_MS = 1000;

export type SubmitResult =
  | { readonly kind: 'accepted'; readonly carrierMessageId: string; readonly recorded: Promise<void> }
  | { readonly kind: 'refused'; readonly status: number }
  | { readonly kind: 'unavailable'; readonly reason: string };

export class SmscBind {
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
    session.on('error', (err) => {
      // The smpp package stops reading a session at the first PDU it cannot frame or parse (and
      // a socket error ends it anyway): drop it and bind again rather than wait for the
      // enquire_link watchdog of a session that looks alive.
      this.log.warn({ err }, 'carrier: session error; reconnecting');
      session.destroy();
    });
    session.on('close', () => {
      clearTimeout(bindTimer);
      this.closed(session);
    });
    session.on('connect', () => {
      session.bind_transceiver({ system_id: this.route.systemId, password: this.route.password, interface_version: 0x34 }, (resp) => {
        clearTimeout(bindTimer);
        if (resp.command_status !== STATUS.ESME_ROK) {
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
        if (resp.command_status === STATUS.ESME_ROK && resp.message_id) {
          finish({ kind: 'accepted', carrierMessageId: resp.message_id, recorded: onAccepted(resp.message_id) });
        } else {
          finish({ kind: 'refused', status: resp.command_status === STATUS.ESME_ROK ? STATUS.ESME_RSYSERR : resp.command_status });
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
