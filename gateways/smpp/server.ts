// The customer-facing SMPP server (spec 1 §1, §4 SMPP transport, §5 items 5–6, §6 rule 4,
// §8): binds with the system_id/password of an api_sms token, submit_sm through the same
// acceptance core as HTTP, concatenated parts reassembled into one message, query_sm,
// enquire_link, unbind, generic_nack, and receipts/inbound messages as deliver_sm to the
// token's receiver and transceiver sessions. Everything a client can observe is described in
// docs/smpp.md. This file owns the listener and the server-wide state; a connection is a
// CustomerSession (./session.ts), receipts are routed by the ReceiverPool (./receivers.ts).
import { createServer, type Server, type Session } from 'smpp';
import type { Logger } from '../../infra/logger';
import { smppSessionsBound } from '../../infra/metrics';
import { Submissions } from './accept';
import { BindThrottle, SYSTEM_CLOCK } from './bind-throttle';
import { DEFAULT_SMPP_OPTIONS, UNBIND_WAIT_MS, type SmppOptions, type SmppServer, type SmppServerDeps } from './options';
import type { MessageReader, ReceiptFeed, ScheduledCanceler, SmppDirectory } from './ports';
import { Reassembler, STATUS } from './protocol';
import { ReceiverPool } from './receivers';
import { cancelSm, querySm, submitSm } from './requests';
import { CustomerSession, type HeldPart, type PartMeta, type SessionContext, type SessionRequests } from './session';

class CustomerServer implements SessionContext {
  readonly log: Logger;
  readonly directory: SmppDirectory;
  readonly receipts: ReceiptFeed;
  readonly states: MessageReader;
  readonly scheduled: ScheduledCanceler | undefined;
  readonly receivers: ReceiverPool;
  readonly submissions: Submissions;
  readonly reassembler: Reassembler<PartMeta, HeldPart>;
  readonly requests: SessionRequests = { submitSm, querySm, cancelSm };
  readonly throttle: BindThrottle;
  stopping = false;
  readonly sessions = new Set<CustomerSession>();
  private readonly bound = new Map<string, Set<CustomerSession>>();

  constructor(readonly options: SmppOptions, deps: SmppServerDeps) {
    this.log = deps.log;
    this.directory = deps.directory;
    this.receipts = deps.receipts;
    this.states = deps.states;
    this.scheduled = deps.scheduled;
    this.receivers = new ReceiverPool(deps.receipts, options, deps.log, () => this.stopping);
    this.submissions = new Submissions(deps.acceptance, deps.log);
    this.throttle = new BindThrottle(options, deps.clock ?? SYSTEM_CLOCK);
    this.reassembler = new Reassembler<PartMeta, HeldPart>(options.concatTimeoutMs, (waiters, received, total) => {
      this.log.info({ received, total }, 'smpp: concatenated message incomplete after the timeout; its parts are refused');
      for (const w of waiters) w.session.answerSubmit(w.sequence, { ok: false, status: STATUS.ESME_RSUBMITFAIL, reason: 'concatenation timeout' }, true);
    });
  }

  boundCount(systemId?: string): number {
    if (systemId === undefined) return [...this.bound.values()].reduce((n, s) => n + s.size, 0);
    return this.bound.get(systemId)?.size ?? 0;
  }

  addBound(session: CustomerSession): void {
    const systemId = session.binding?.systemId;
    if (systemId === undefined) return;
    const set = this.bound.get(systemId) ?? new Set<CustomerSession>();
    if (!set.has(session)) smppSessionsBound.inc({ mode: session.binding?.mode ?? 'unknown' });
    set.add(session);
    this.bound.set(systemId, set);
  }

  removeBound(session: CustomerSession): void {
    const systemId = session.binding?.systemId;
    if (systemId === undefined) return;
    if (this.bound.get(systemId)?.delete(session)) smppSessionsBound.dec({ mode: session.binding?.mode ?? 'unknown' });
    if (this.bound.get(systemId)?.size === 0) this.bound.delete(systemId);
  }

  opened(session: Session): void {
    if (this.stopping) {
      session.destroy();
      return;
    }
    const customer = new CustomerSession(session, this);
    this.sessions.add(customer);
    this.log.debug({ connection: customer.conn.id, remote: customer.conn.remote }, 'smpp: connection opened');
  }

  closed(session: CustomerSession): void {
    this.sessions.delete(session);
    this.reassembler.forget((w) => w.session === session);
    this.log.debug({ connection: session.conn.id, systemId: session.binding?.systemId }, 'smpp: connection closed');
  }

  /** Answers what is in flight, unbinds every session, waits for them and the feeds to close. */
  async drain(): Promise<void> {
    this.stopping = true;
    // Submits already accepted get their answers before the sessions are unbound.
    const deadline = Date.now() + UNBIND_WAIT_MS;
    while ([...this.sessions].some((s) => s.inFlight > 0) && Date.now() < deadline) await sleep(20);
    for (const w of this.reassembler.clear()) w.session.answerSubmit(w.sequence, { ok: false, status: STATUS.ESME_RSYSERR, reason: 'server stopping' }, true);
    const all = [...this.sessions];
    for (const session of all) session.unbindAndClose('server stopping');
    this.log.debug({ sessions: all.length, feeds: this.receivers.stoppingFeeds }, 'smpp: stopping: sessions unbound, waiting for the receipt feeds');
    await this.receivers.drained();
    const waitClosed = Date.now() + UNBIND_WAIT_MS + 500;
    while (this.sessions.size > 0 && Date.now() < waitClosed) await sleep(20);
    for (const session of this.sessions) session.conn.destroy();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startSmppServer(port: number, deps: SmppServerDeps, overrides: Partial<SmppOptions> = {}): Promise<SmppServer> {
  const options: SmppOptions = { ...DEFAULT_SMPP_OPTIONS, ...overrides };
  const { log } = deps;
  const hub = new CustomerServer(options, deps);
  const watch = setInterval(() => {
    const now = performance.now();
    for (const session of hub.sessions) session.watch(now);
  }, options.watchIntervalMs);
  watch.unref();

  const server: Server = createServer((session) => hub.opened(session));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, options.host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => log.error({ err }, 'smpp: server error'));
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  log.info({ port: actualPort }, 'smpp gateway listening');

  return {
    port: actualPort,
    sessions: (systemId) => hub.boundCount(systemId),
    heldParts: () => hub.reassembler.heldParts,
    stop: async () => {
      if (hub.stopping) return;
      clearInterval(watch);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await hub.drain();
      log.debug({ open: hub.sessions.size }, 'smpp: stopping: waiting for the listener to close');
      await closed;
      log.info({ port: actualPort }, 'smpp gateway stopped');
    },
  };
}
