// The customer-facing SMPP server (spec 1 §1, §4 SMPP transport, §5 items 5–6, §6 rule 4,
// §8): binds with the system_id/password of an api_sms token, submit_sm through the same
// acceptance core as HTTP, concatenated parts reassembled into one message, query_sm,
// enquire_link, unbind, generic_nack, and receipts/inbound messages as deliver_sm to the
// token's receiver and transceiver sessions. Everything a client can observe is described in
// docs/smpp.md; this file is the adapter, the rules live in ./submit.ts and ./receipts.ts.
import { createServer, type Server, type Session } from 'smpp';
import type { Organization, Token } from '../../core/accounts/types';
import type { Submitter } from '../../core/sms/acceptance';
import type { Logger } from '../../infra/logger';
import { smsAccepted } from '../../infra/metrics';
import { SubmitBatcher, type BulkAcceptance, type SubmitOutcome } from './batcher';
import { SmppConnection, type Frame } from './connection';
import { verifySmppPasswordAsync } from '../../core/accounts/secrets';
import { TokenBucket } from './limits';
import type { Deliverable, DeliveryResult, DlrMarkers, FeedSubscription, MessageReader, ReceiptFeed, SmppDirectory } from './ports';
import { inboundPdu, queryAnswer, receiptPdu, wantsReceipts } from './receipts';
import { concatKey, Reassembler } from './reassembly';
import { assembleText, interpretSubmit, type DataCoding, type SubmitFields } from './submit';
import { COMMAND, CorruptPduError, RESPONSE_BIT, readBind, readQuerySm, readSubmitSm, STATUS, statusName, UNSUPPORTED_REQUESTS, withMessageId } from './wire';

export type BindMode = 'transmitter' | 'receiver' | 'transceiver';

export interface SmppOptions {
  /** Address to listen on. */
  readonly host: string;
  /** system_id this server names itself with in bind responses. */
  readonly serverSystemId: string;
  /** Bound sessions per system_id (in this process); one more is refused with ESME_RBINDFAIL. */
  readonly maxSessionsPerSystemId: number;
  /** submit_sm / query_sm being processed per session; one more is answered ESME_RTHROTTLED. */
  readonly window: number;
  /** submit_sm per second per session (token bucket); beyond, ESME_RTHROTTLED. */
  readonly maxSubmitsPerSecond: number;
  /** Burst of the token bucket; default one second's worth. */
  readonly submitBurst: number | undefined;
  /** No PDU from the client for this long: the server unbinds and closes. */
  readonly idleTimeoutMs: number;
  /** A connection that has not bound by then is closed. */
  readonly bindTimeoutMs: number;
  /** How long the parts of a concatenated message are waited for. */
  readonly concatTimeoutMs: number;
  /** Parts held per session while their messages are incomplete; beyond, ESME_RMSGQFUL. */
  readonly maxHeldParts: number;
  /** How long a deliver_sm waits for its deliver_sm_resp. */
  readonly deliverTimeoutMs: number;
  /** deliver_sm awaiting their response per session. */
  readonly deliverWindow: number;
  /** How often sessions are checked against the directory (revocation) and for idleness. */
  readonly watchIntervalMs: number;
  /** Longest PDU accepted (message_payload included). */
  readonly maxPduLength: number;
}

export const DEFAULT_SMPP_OPTIONS: SmppOptions = {
  host: '0.0.0.0',
  serverSystemId: 'SMSPLATFORM',
  maxSessionsPerSystemId: 10,
  window: 100,
  maxSubmitsPerSecond: 10_000,
  submitBurst: undefined,
  idleTimeoutMs: 120_000,
  bindTimeoutMs: 30_000,
  concatTimeoutMs: 60_000,
  maxHeldParts: 1000,
  deliverTimeoutMs: 10_000,
  deliverWindow: 100,
  watchIntervalMs: 1000,
  maxPduLength: 16_384,
};

export interface SmppServerDeps {
  readonly directory: SmppDirectory;
  readonly acceptance: BulkAcceptance;
  readonly states: MessageReader;
  readonly markers: DlrMarkers;
  readonly receipts: ReceiptFeed;
  readonly log: Logger;
}

interface Binding {
  readonly mode: BindMode;
  readonly systemId: string;
  readonly token: Token;
  readonly org: Organization;
  /** The password hash the bind was checked against: a re-issued password ends the session. */
  readonly passwordHash: string;
  readonly version: number;
}

class Peer {
  binding: Binding | undefined;
  binding_in_progress = false;
  closing = false;
  /** submit_sm / query_sm being processed. */
  inFlight = 0;
  /** Parts of incomplete concatenated messages held for an answer. */
  held = 0;
  delivering = 0;
  lastActivity: number;
  readonly openedAt: number;

  constructor(readonly conn: SmppConnection, readonly bucket: TokenBucket, now: number) {
    this.lastActivity = now;
    this.openedAt = now;
  }

  get canSubmit(): boolean {
    return !this.closing && (this.binding?.mode === 'transmitter' || this.binding?.mode === 'transceiver');
  }

  get canReceive(): boolean {
    return !this.closing && (this.binding?.mode === 'receiver' || this.binding?.mode === 'transceiver');
  }
}

interface HeldPart {
  readonly peer: Peer;
  readonly sequence: number;
}

interface PartMeta {
  readonly fields: SubmitFields;
  readonly dataCoding: DataCoding;
}

const BIND_MODES: ReadonlyMap<number, BindMode> = new Map([
  [COMMAND.bind_transmitter, 'transmitter'],
  [COMMAND.bind_receiver, 'receiver'],
  [COMMAND.bind_transceiver, 'transceiver'],
]);

const UNBIND_WAIT_MS = 2000;
const MARKER_ATTEMPTS = 3;

export interface SmppServer {
  readonly port: number;
  /** Bound sessions by system_id (for tests and /health-like reporting). */
  sessions(systemId?: string): number;
  stop(): Promise<void>;
}

export async function startSmppServer(port: number, deps: SmppServerDeps, overrides: Partial<SmppOptions> = {}): Promise<SmppServer> {
  const options: SmppOptions = { ...DEFAULT_SMPP_OPTIONS, ...overrides };
  const { log, directory } = deps;
  const peers = new Set<Peer>();
  const bound = new Map<string, Set<Peer>>();
  const receivers = new Map<string, Peer[]>();
  const roundRobin = new Map<string, number>();
  const feeds = new Map<string, FeedSubscription>();
  const feedStops = new Set<Promise<void>>();
  const capacityWaiters = new Map<string, Set<() => void>>();
  const batcher = new SubmitBatcher(deps.acceptance, { maxItems: 100, concurrency: 4 });
  let stopping = false;

  const reassembler = new Reassembler<PartMeta, HeldPart>(options.concatTimeoutMs, (waiters, received, total) => {
    log.info({ received, total }, 'smpp: concatenated message incomplete after the timeout; its parts are refused');
    for (const w of waiters) answerSubmit(w.peer, w.sequence, { ok: false, status: STATUS.ESME_RSUBMITFAIL, reason: 'concatenation timeout' }, true);
  });

  // --- sessions and bookkeeping ------------------------------------------------------------

  const wakeDeliverers = (tokenId: string): void => {
    const waiting = capacityWaiters.get(tokenId);
    if (!waiting) return;
    for (const wake of [...waiting]) wake();
  };

  const attachReceiver = (peer: Peer, tokenId: string): void => {
    const list = receivers.get(tokenId) ?? [];
    list.push(peer);
    receivers.set(tokenId, list);
    if (!feeds.has(tokenId)) feeds.set(tokenId, deps.receipts.open(tokenId, (item) => deliver(tokenId, item)));
    wakeDeliverers(tokenId);
  };

  const detach = (peer: Peer): void => {
    const b = peer.binding;
    if (!b) return;
    bound.get(b.systemId)?.delete(peer);
    if (bound.get(b.systemId)?.size === 0) bound.delete(b.systemId);
    const list = receivers.get(b.token.id);
    if (!list) return;
    const rest = list.filter((p) => p !== peer);
    if (rest.length > 0) {
      receivers.set(b.token.id, rest);
      return;
    }
    receivers.delete(b.token.id);
    const feed = feeds.get(b.token.id);
    feeds.delete(b.token.id);
    wakeDeliverers(b.token.id);
    if (feed) {
      const stopped = feed.stop().catch((err: unknown) => log.warn({ err }, 'smpp: receipt feed did not stop cleanly'));
      feedStops.add(stopped);
      void stopped.finally(() => feedStops.delete(stopped));
    }
  };

  /** Ends a bound session the server's way: unbind, wait briefly for unbind_resp, close. */
  const unbindAndClose = (peer: Peer, reason: string): void => {
    if (peer.closing) return;
    peer.closing = true;
    log.info({ connection: peer.conn.id, systemId: peer.binding?.systemId, reason }, 'smpp: closing session');
    detach(peer);
    if (!peer.binding) {
      peer.conn.end();
      return;
    }
    void peer.conn.request('unbind', {}, UNBIND_WAIT_MS).then(() => peer.conn.end());
  };

  const stillValid = (b: Binding): string | undefined => {
    const token = directory.token(b.token.id);
    if (!token || token.revokedAt) return 'token revoked';
    if (!token.smpp || token.smpp.systemId !== b.systemId) return 'SMPP credentials revoked';
    if (token.smpp.passwordHash !== b.passwordHash) return 'SMPP password re-issued';
    const org = directory.org(token.orgId);
    if (!org?.smppEnabled) return 'SMPP disabled on the organization';
    return undefined;
  };

  const watch = setInterval(() => {
    const now = performance.now();
    for (const peer of peers) {
      if (peer.closing) continue;
      if (!peer.binding) {
        if (!peer.binding_in_progress && now - peer.openedAt > options.bindTimeoutMs) unbindAndClose(peer, 'no bind within the bind timeout');
        continue;
      }
      const invalid = stillValid(peer.binding);
      if (invalid) unbindAndClose(peer, invalid);
      else if (now - peer.lastActivity > options.idleTimeoutMs && peer.inFlight === 0) unbindAndClose(peer, 'idle timeout');
    }
  }, options.watchIntervalMs);
  watch.unref();

  // --- receipts and inbound messages -------------------------------------------------------

  /** A receiver of the token with room in its deliver window; waits for room up to the deliver timeout. */
  const receiverFor = async (tokenId: string): Promise<Peer | undefined> => {
    const deadline = performance.now() + options.deliverTimeoutMs;
    for (;;) {
      const list = (receivers.get(tokenId) ?? []).filter((p) => p.canReceive);
      if (list.length === 0 || stopping) return undefined;
      const start = roundRobin.get(tokenId) ?? 0;
      for (let i = 0; i < list.length; i++) {
        const peer = list[(start + i) % list.length];
        if (peer && peer.delivering < options.deliverWindow) {
          roundRobin.set(tokenId, (start + i + 1) % list.length);
          return peer;
        }
      }
      const left = deadline - performance.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const waiting = capacityWaiters.get(tokenId) ?? new Set<() => void>();
        capacityWaiters.set(tokenId, waiting);
        const wake = (): void => {
          clearTimeout(timer);
          waiting.delete(wake);
          if (waiting.size === 0) capacityWaiters.delete(tokenId);
          resolve();
        };
        const timer = setTimeout(wake, left);
        waiting.add(wake);
      });
    }
  };

  const deliver = async (tokenId: string, item: Deliverable): Promise<DeliveryResult> => {
    const peer = await receiverFor(tokenId);
    if (!peer?.binding) return 'unavailable';
    const version = peer.binding.version;
    const pdu = item.kind === 'receipt' ? receiptPdu(item, version) : inboundPdu(item, version);
    peer.delivering++;
    try {
      const resp = await peer.conn.request('deliver_sm', pdu, options.deliverTimeoutMs);
      if (!resp) return 'unavailable';
      if (resp.status !== STATUS.ESME_ROK) {
        log.info({ connection: peer.conn.id, status: statusName(resp.status), kind: item.kind }, 'smpp: client refused a deliver_sm');
        return 'refused';
      }
      return 'ok';
    } finally {
      peer.delivering--;
      wakeDeliverers(tokenId);
    }
  };

  // --- PDU handlers -------------------------------------------------------------------------

  const respondError = (peer: Peer, commandId: number, sequence: number, status: number): void => {
    peer.conn.sendHeader((commandId | RESPONSE_BIT) >>> 0, status, sequence);
  };

  const onBind = async (peer: Peer, frame: Frame, mode: BindMode): Promise<void> => {
    const { commandId, sequence } = frame.header;
    if (peer.binding || peer.binding_in_progress) return respondError(peer, commandId, sequence, STATUS.ESME_RALYBND);
    const request = readBind(frame.pdu);
    peer.binding_in_progress = true;
    try {
      const refuse = (status: number, reason: string): void => {
        log.info({ connection: peer.conn.id, systemId: request.systemId, mode, status: statusName(status), reason }, 'smpp: bind refused');
        respondError(peer, commandId, sequence, status);
      };
      const token = directory.tokenBySystemId(request.systemId);
      if (!token || token.revokedAt || token.kind !== 'api_sms' || !token.smpp || token.smpp.systemId !== request.systemId) return refuse(STATUS.ESME_RINVSYSID, 'unknown system_id');
      const passwordHash = token.smpp.passwordHash;
      if (!(await verifySmppPasswordAsync(request.password, passwordHash))) return refuse(STATUS.ESME_RINVPASWD, 'wrong password');
      const org = directory.org(token.orgId);
      if (!org?.smppEnabled) return refuse(STATUS.ESME_RBINDFAIL, 'SMPP is not enabled on the organization');
      if ((bound.get(request.systemId)?.size ?? 0) >= options.maxSessionsPerSystemId) return refuse(STATUS.ESME_RBINDFAIL, `already ${options.maxSessionsPerSystemId} sessions for this system_id`);
      try {
        await deps.receipts.ensure(token.id);
      } catch (err) {
        log.error({ err, tokenId: token.id }, 'smpp: could not prepare the receipt feed');
        return refuse(STATUS.ESME_RSYSERR, 'receipt feed unavailable');
      }
      if (peer.closing || peer.conn.isClosed || stopping) return undefined;
      // Re-checked after the awaits: parallel binds of one system_id race for the last slot.
      if ((bound.get(request.systemId)?.size ?? 0) >= options.maxSessionsPerSystemId) return refuse(STATUS.ESME_RBINDFAIL, `already ${options.maxSessionsPerSystemId} sessions for this system_id`);
      const version = request.interfaceVersion >= 0x50 ? 0x50 : request.interfaceVersion >= 0x34 ? 0x34 : request.interfaceVersion;
      peer.binding = { mode, systemId: request.systemId, token, org, passwordHash, version };
      const set = bound.get(request.systemId) ?? new Set<Peer>();
      set.add(peer);
      bound.set(request.systemId, set);
      peer.conn.send(`bind_${mode}_resp`, {
        sequence_number: sequence,
        system_id: options.serverSystemId,
        ...(version >= 0x34 ? { sc_interface_version: version } : {}),
      });
      log.info({ connection: peer.conn.id, systemId: request.systemId, tokenId: token.id, mode, version: version.toString(16) }, 'smpp: session bound');
      if (peer.canReceive) attachReceiver(peer, token.id);
      return undefined;
    } finally {
      peer.binding_in_progress = false;
    }
  };

  const answerSubmit = (peer: Peer, sequence: number, outcome: SubmitOutcome, held: boolean): void => {
    if (held) peer.held--;
    else peer.inFlight--;
    if (peer.conn.isClosed) return;
    if (outcome.ok) peer.conn.sendBytes(withMessageId(COMMAND.submit_sm | RESPONSE_BIT, sequence, outcome.message.id));
    else peer.conn.sendHeader(COMMAND.submit_sm | RESPONSE_BIT, outcome.status, sequence);
  };

  const putMarker = async (messageId: string, fields: SubmitFields): Promise<void> => {
    const marker = { rd: fields.registeredDelivery, ...(fields.userMessageReference === undefined ? {} : { umr: fields.userMessageReference }) };
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.markers.put(messageId, marker);
        return;
      } catch (err) {
        if (attempt >= MARKER_ATTEMPTS) {
          // The message is accepted and charged: answering an error would make the client send it twice.
          log.error({ err, messageId }, 'smpp: could not record the receipt request; this message will get no receipts');
          return;
        }
      }
    }
  };

  const accept = async (binding: Binding, fields: SubmitFields, text: string): Promise<SubmitOutcome> => {
    const submitter: Submitter = { orgId: binding.token.orgId, projectId: binding.token.projectId, tokenId: binding.token.id, source: 'smpp', currency: binding.org.currency };
    const outcome = await batcher.submit(submitter, { from: fields.from, to: fields.to, text, allowUnicode: fields.dataCoding === 8 });
    if (!outcome.ok) {
      log.debug({ systemId: binding.systemId, status: statusName(outcome.status), reason: outcome.reason }, 'smpp: submit_sm refused');
      return outcome;
    }
    smsAccepted.inc({ source: 'smpp' });
    if (wantsReceipts(fields.registeredDelivery)) await putMarker(outcome.message.id, fields);
    return outcome;
  };

  const onSubmit = (peer: Peer, frame: Frame): void => {
    const { sequence } = frame.header;
    const refuse = (status: number): void => respondError(peer, COMMAND.submit_sm, sequence, status);
    const binding = peer.binding;
    if (!binding || !peer.canSubmit) return refuse(STATUS.ESME_RINVBNDSTS);
    const submit = readSubmitSm(frame.pdu);
    if (peer.inFlight >= options.window) return refuse(STATUS.ESME_RTHROTTLED);
    if (!peer.bucket.take()) return refuse(STATUS.ESME_RTHROTTLED);
    if (stillValid(binding)) {
      unbindAndClose(peer, 'credentials no longer valid');
      return refuse(STATUS.ESME_RINVBNDSTS);
    }
    const interpreted = interpretSubmit(submit);
    if (interpreted.kind === 'refused') {
      log.debug({ systemId: binding.systemId, status: statusName(interpreted.status), reason: interpreted.reason }, 'smpp: submit_sm refused');
      return refuse(interpreted.status);
    }
    peer.inFlight++;
    if (interpreted.kind === 'whole') {
      void accept(binding, interpreted.fields, interpreted.text)
        .catch((err: unknown): SubmitOutcome => {
          log.error({ err }, 'smpp: submit failed');
          return { ok: false, status: STATUS.ESME_RSYSERR, reason: 'internal error' };
        })
        .then((outcome) => answerSubmit(peer, sequence, outcome, false));
      return undefined;
    }
    if (peer.held >= options.maxHeldParts) {
      peer.inFlight--;
      return refuse(STATUS.ESME_RMSGQFUL);
    }
    const key = concatKey(binding.systemId, interpreted.fields.from, interpreted.fields.to, interpreted.concat);
    // Held parts leave the window: a client may send a message of more parts than its window.
    peer.inFlight--;
    peer.held++;
    const complete = reassembler.add(key, { concat: interpreted.concat, body: interpreted.body, meta: { fields: interpreted.fields, dataCoding: interpreted.fields.dataCoding }, waiter: { peer, sequence } });
    if (!complete) return undefined;
    let text: string;
    try {
      text = assembleText(complete.parts.map((p) => ({ seq: p.seq, body: p.body, dataCoding: p.meta.dataCoding })));
    } catch {
      for (const w of complete.waiters) answerSubmit(w.peer, w.sequence, { ok: false, status: STATUS.ESME_RINVMSGLEN, reason: 'a UCS-2 body must have an even number of octets' }, true);
      return undefined;
    }
    const fields = complete.parts[0]?.meta.fields ?? interpreted.fields;
    void accept(binding, fields, text)
      .catch((err: unknown): SubmitOutcome => {
        log.error({ err }, 'smpp: submit failed');
        return { ok: false, status: STATUS.ESME_RSYSERR, reason: 'internal error' };
      })
      .then((outcome) => {
        for (const w of complete.waiters) answerSubmit(w.peer, w.sequence, outcome, true);
      });
    return undefined;
  };

  const onQuery = async (peer: Peer, frame: Frame): Promise<void> => {
    const { sequence } = frame.header;
    const binding = peer.binding;
    if (!binding || !peer.canSubmit) return respondError(peer, COMMAND.query_sm, sequence, STATUS.ESME_RINVBNDSTS);
    const query = readQuerySm(frame.pdu);
    if (peer.inFlight >= options.window) return respondError(peer, COMMAND.query_sm, sequence, STATUS.ESME_RTHROTTLED);
    peer.inFlight++;
    try {
      const message = await deps.states.get(query.messageId).catch(() => null);
      if (!message || message.orgId !== binding.token.orgId || message.projectId !== (binding.token.projectId ?? '')) {
        return respondError(peer, COMMAND.query_sm, sequence, STATUS.ESME_RQUERYFAIL);
      }
      const answer = queryAnswer(message);
      peer.conn.send('query_sm_resp', { sequence_number: sequence, message_id: message.id, final_date: answer.finalDate ?? '', message_state: answer.messageState, error_code: answer.errorCode });
      return undefined;
    } finally {
      peer.inFlight--;
    }
  };

  /** unbind (v3.4 and v5.0): no new work; the submits in flight are answered first, then unbind_resp and close. */
  const onUnbind = async (peer: Peer, sequence: number): Promise<void> => {
    peer.closing = true;
    detach(peer);
    const deadline = performance.now() + UNBIND_WAIT_MS;
    while (peer.inFlight > 0 && !peer.conn.isClosed && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    peer.conn.sendHeader(COMMAND.unbind | RESPONSE_BIT, STATUS.ESME_ROK, sequence);
    peer.conn.end();
  };

  const onFrame = (peer: Peer, frame: Frame): void => {
    peer.lastActivity = performance.now();
    const { commandId, sequence } = frame.header;
    if ((commandId & RESPONSE_BIT) !== 0) return; // a late or unsolicited response: nothing waits for it
    try {
      const mode = BIND_MODES.get(commandId);
      if (mode) {
        void onBind(peer, frame, mode).catch((err: unknown) => {
          log.error({ err }, 'smpp: bind failed');
          respondError(peer, commandId, sequence, STATUS.ESME_RSYSERR);
        });
        return;
      }
      switch (commandId) {
        case COMMAND.submit_sm:
          onSubmit(peer, frame);
          return;
        case COMMAND.query_sm:
          void onQuery(peer, frame).catch((err: unknown) => {
            log.error({ err }, 'smpp: query_sm failed');
            respondError(peer, commandId, sequence, STATUS.ESME_RSYSERR);
          });
          return;
        case COMMAND.enquire_link:
          peer.conn.sendHeader(COMMAND.enquire_link | RESPONSE_BIT, STATUS.ESME_ROK, sequence);
          return;
        case COMMAND.unbind:
          void onUnbind(peer, sequence);
          return;
        default:
          if (UNSUPPORTED_REQUESTS.has(commandId)) respondError(peer, commandId, sequence, STATUS.ESME_RINVCMDID);
          else peer.conn.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDID, sequence);
      }
    } catch (err) {
      if (!(err instanceof CorruptPduError)) throw err;
      log.info({ connection: peer.conn.id, commandId: `0x${commandId.toString(16)}`, reason: err.message }, 'smpp: corrupt PDU answered with generic_nack');
      peer.conn.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDLEN, sequence);
    }
  };

  const onSession = (session: Session): void => {
    if (stopping) {
      session.destroy();
      return;
    }
    const rate = options.maxSubmitsPerSecond;
    // The callbacks run only once the socket has data or closes, after `peer` exists.
    const conn: SmppConnection = new SmppConnection(session, {
      maxPduLength: options.maxPduLength,
      log,
      onFrame: (frame) => onFrame(peer, frame),
      onClose: () => {
        peers.delete(peer);
        detach(peer);
        reassembler.forget((w) => w.peer === peer);
        log.debug({ connection: conn.id, systemId: peer.binding?.systemId }, 'smpp: connection closed');
      },
    });
    const peer = new Peer(conn, new TokenBucket(rate, options.submitBurst ?? rate), performance.now());
    peers.add(peer);
    log.debug({ connection: conn.id, remote: conn.remote }, 'smpp: connection opened');
  };

  const server: Server = createServer(onSession);
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
    sessions: (systemId) => (systemId === undefined ? [...bound.values()].reduce((n, s) => n + s.size, 0) : (bound.get(systemId)?.size ?? 0)),
    stop: async () => {
      if (stopping) return;
      stopping = true;
      clearInterval(watch);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Submits already accepted get their answers before the sessions are unbound.
      const deadline = Date.now() + UNBIND_WAIT_MS;
      while ([...peers].some((p) => p.inFlight > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const w of reassembler.clear()) answerSubmit(w.peer, w.sequence, { ok: false, status: STATUS.ESME_RSYSERR, reason: 'server stopping' }, true);
      const all = [...peers];
      for (const peer of all) unbindAndClose(peer, 'server stopping');
      log.debug({ sessions: all.length, feeds: feedStops.size }, 'smpp: stopping: sessions unbound, waiting for the receipt feeds');
      await Promise.all([...feedStops]);
      const waitClosed = Date.now() + UNBIND_WAIT_MS + 500;
      while ([...peers].length > 0 && Date.now() < waitClosed) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const peer of peers) peer.conn.destroy();
      log.debug({ open: peers.size }, 'smpp: stopping: waiting for the listener to close');
      await closed;
      log.info({ port: actualPort }, 'smpp gateway stopped');
    },
  };
}
