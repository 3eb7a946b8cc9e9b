// One client connection of the customer SMPP server (spec 1 §4 SMPP transport, §8): its bind,
// submit_sm (whole or a concatenated part), query_sm, enquire_link, unbind and the requests it
// may not make, answered as docs/smpp.md says. Server-wide state (bound sessions, receivers,
// reassembly, the acceptance path) is reached through the SessionContext.
import type { Session } from 'smpp';
import type { Logger } from '../../infra/logger';
import { smppPdus, smppSubmitOk } from '../../infra/metrics';
import type { SubmitOutcome } from './batcher';
import { bindingProblem, decideBind, sessionLimit, type BindChecks } from './bind';
import { TokenBucket } from './limits';
import { UNBIND_WAIT_MS, type Binding, type BindMode, type SmppOptions } from './options';
import type { MessageReader, ScheduledCanceler } from './ports';
import {
  COMMAND, commandName, CorruptPduError, isResponse, readBind, responseTo, SmppConnection, STATUS, statusName, UNSUPPORTED_REQUESTS, withMessageId,
  type DataCoding, type Frame, type Reassembler,
} from './protocol';
import type { Receiver, ReceiverPool } from './receivers';
import type { Submissions } from './accept';
import type { SubmitFields } from './submit';

export interface HeldPart {
  readonly session: CustomerSession;
  readonly sequence: number;
}

export interface PartMeta {
  readonly fields: SubmitFields;
  readonly dataCoding: DataCoding;
}

export interface SessionRequests {
  submitSm(session: CustomerSession, frame: Frame): void;
  querySm(session: CustomerSession, frame: Frame): Promise<void>;
  cancelSm(session: CustomerSession, frame: Frame): Promise<void>;
}

export interface SessionContext extends BindChecks {
  readonly options: SmppOptions;
  readonly log: Logger;
  readonly states: MessageReader;
  /** cancel_sm of scheduled messages (DESIGN §4 Scheduling); absent: cancel_sm is ESME_RINVCMDID. */
  readonly scheduled: ScheduledCanceler | undefined;
  readonly receivers: ReceiverPool;
  readonly submissions: Submissions;
  readonly reassembler: Reassembler<PartMeta, HeldPart>;
  /** submit_sm and query_sm of a bound session (./requests.ts), handed in so the two modules do not import each other. */
  readonly requests: SessionRequests;
  readonly stopping: boolean;
  addBound(session: CustomerSession): void;
  removeBound(session: CustomerSession): void;
  /** The connection closed: forget the session. */
  closed(session: CustomerSession): void;
}

const BIND_MODES: ReadonlyMap<number, BindMode> = new Map([
  [COMMAND.bind_transmitter, 'transmitter'],
  [COMMAND.bind_receiver, 'receiver'],
  [COMMAND.bind_transceiver, 'transceiver'],
]);

export class CustomerSession implements Receiver {
  binding: Binding | undefined;
  closing = false;
  /** submit_sm / query_sm being processed. */
  inFlight = 0;
  /** Parts of incomplete concatenated messages held for an answer. */
  held = 0;
  delivering = 0;
  readonly conn: SmppConnection;
  private bindingInProgress = false;
  private lastActivity = performance.now();
  private readonly openedAt = this.lastActivity;
  readonly bucket: TokenBucket;
  private readonly log: Logger;

  constructor(session: Session, readonly ctx: SessionContext) {
    const { options } = ctx;
    this.log = ctx.log;
    this.bucket = new TokenBucket(options.maxSubmitsPerSecond, options.submitBurst ?? options.maxSubmitsPerSecond);
    this.conn = new SmppConnection(session, {
      maxPduLength: options.maxPduLength,
      log: ctx.log,
      onFrame: (frame) => this.onFrame(frame),
      onLost: () => {
        // No deliver_sm may be routed to a connection whose framing is gone.
        this.closing = true;
        this.detach();
      },
      onClose: () => {
        this.detach();
        ctx.closed(this);
      },
    });
  }

  get canSubmit(): boolean {
    return !this.closing && (this.binding?.mode === 'transmitter' || this.binding?.mode === 'transceiver');
  }

  get canReceive(): boolean {
    return !this.closing && this.conn.isUsable && (this.binding?.mode === 'receiver' || this.binding?.mode === 'transceiver');
  }

  /** The periodic check: bind timeout, revoked credentials, idleness. */
  watch(now: number): void {
    if (this.closing) return;
    if (!this.binding) {
      if (!this.bindingInProgress && now - this.openedAt > this.ctx.options.bindTimeoutMs) this.unbindAndClose('no bind within the bind timeout');
      return;
    }
    const invalid = bindingProblem(this.ctx.directory, this.binding);
    if (invalid) this.unbindAndClose(invalid);
    else if (now - this.lastActivity > this.ctx.options.idleTimeoutMs && this.inFlight === 0) this.unbindAndClose('idle timeout');
  }

  /** Ends the session the server's way: unbind, wait briefly for unbind_resp, close. */
  unbindAndClose(reason: string): void {
    if (this.closing) return;
    this.closing = true;
    this.log.info({ connection: this.conn.id, systemId: this.binding?.systemId, reason }, 'smpp: closing session');
    this.detach();
    if (!this.binding) {
      this.conn.end();
      return;
    }
    void this.conn.request('unbind', {}, UNBIND_WAIT_MS).then(() => this.conn.end());
  }

  /** Answers a submit_sm (or a held part of a concatenated message) and frees its slot. */
  answerSubmit(sequence: number, outcome: SubmitOutcome, held: boolean): void {
    if (held) this.held--;
    else this.inFlight--;
    if (outcome.ok) smppSubmitOk.inc();
    else smppPdus.inc({ command: 'submit_sm', status: statusName(outcome.status) });
    if (this.conn.isClosed) return;
    if (outcome.ok) this.conn.sendBytes(withMessageId(responseTo(COMMAND.submit_sm), sequence, outcome.message.id));
    else this.conn.sendHeader(responseTo(COMMAND.submit_sm), outcome.status, sequence);
  }

  private detach(): void {
    const b = this.binding;
    if (!b) return;
    this.ctx.removeBound(this);
    this.ctx.receivers.detach(this, b.token.id);
  }

  respondError(commandId: number, sequence: number, status: number): void {
    smppPdus.inc({ command: commandName(commandId), status: statusName(status) });
    this.conn.sendHeader(responseTo(commandId), status, sequence);
  }

  private onFrame(frame: Frame): void {
    this.lastActivity = performance.now();
    const { commandId, sequence } = frame.header;
    if (isResponse(commandId)) return; // a late or unsolicited response: nothing waits for it
    try {
      const mode = BIND_MODES.get(commandId);
      if (mode) {
        void this.onBind(frame, mode).catch((err: unknown) => {
          this.log.error({ err }, 'smpp: bind failed');
          this.respondError(commandId, sequence, STATUS.ESME_RSYSERR);
        });
        return;
      }
      switch (commandId) {
        case COMMAND.submit_sm:
          this.ctx.requests.submitSm(this, frame);
          return;
        case COMMAND.query_sm:
          void this.ctx.requests.querySm(this, frame).catch((err: unknown) => {
            this.log.error({ err }, 'smpp: query_sm failed');
            this.respondError(commandId, sequence, STATUS.ESME_RSYSERR);
          });
          return;
        case COMMAND.cancel_sm:
          if (!this.ctx.scheduled) {
            this.respondError(commandId, sequence, STATUS.ESME_RINVCMDID);
            return;
          }
          void this.ctx.requests.cancelSm(this, frame).catch((err: unknown) => {
            this.log.error({ err }, 'smpp: cancel_sm failed');
            this.respondError(commandId, sequence, STATUS.ESME_RSYSERR);
          });
          return;
        case COMMAND.enquire_link:
          smppPdus.inc({ command: 'enquire_link', status: 'ESME_ROK' });
          this.conn.sendHeader(responseTo(COMMAND.enquire_link), STATUS.ESME_ROK, sequence);
          return;
        case COMMAND.unbind:
          void this.onUnbind(sequence);
          return;
        default:
          if (UNSUPPORTED_REQUESTS.has(commandId)) this.respondError(commandId, sequence, STATUS.ESME_RINVCMDID);
          else {
            smppPdus.inc({ command: 'unknown', status: 'ESME_RINVCMDID' });
            this.conn.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDID, sequence);
          }
      }
    } catch (err) {
      if (!(err instanceof CorruptPduError)) throw err;
      this.log.info({ connection: this.conn.id, commandId: `0x${commandId.toString(16)}`, reason: err.message }, 'smpp: corrupt PDU answered with generic_nack');
      this.conn.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDLEN, sequence);
    }
  }

  private async onBind(frame: Frame, mode: BindMode): Promise<void> {
    const { commandId, sequence } = frame.header;
    if (this.binding || this.bindingInProgress) return this.respondError(commandId, sequence, STATUS.ESME_RALYBND);
    const request = readBind(frame.pdu);
    this.bindingInProgress = true;
    try {
      const refuse = (status: number, reason: string): void => {
        this.log.info({ connection: this.conn.id, remote: this.conn.remote, systemId: request.systemId, mode, status: statusName(status), reason }, 'smpp: bind refused');
        this.respondError(commandId, sequence, status);
      };
      const decision = await decideBind(this.ctx, request, mode, this.conn.address);
      if (!decision.ok) {
        if (decision.cause !== undefined) this.log.error({ err: decision.cause, systemId: request.systemId }, 'smpp: could not prepare the receipt feed');
        return refuse(decision.status, decision.reason);
      }
      if (this.closing || this.conn.isClosed || this.ctx.stopping) return undefined;
      if (this.ctx.boundCount(request.systemId) >= this.ctx.options.maxSessionsPerSystemId) return refuse(STATUS.ESME_RBINDFAIL, sessionLimit(this.ctx.options));
      const binding = decision.binding;
      this.binding = binding;
      this.ctx.addBound(this);
      smppPdus.inc({ command: `bind_${mode}`, status: 'ESME_ROK' });
      this.conn.send(`bind_${mode}_resp`, {
        sequence_number: sequence,
        system_id: this.ctx.options.serverSystemId,
        ...(binding.version >= 0x34 ? { sc_interface_version: binding.version } : {}),
      });
      this.log.info({ connection: this.conn.id, systemId: binding.systemId, tokenId: binding.token.id, mode, version: binding.version.toString(16) }, 'smpp: session bound');
      if (this.canReceive) this.ctx.receivers.attach(this, binding.token.id);
      return undefined;
    } finally {
      this.bindingInProgress = false;
    }
  }

  /** unbind (v3.4 and v5.0): no new work; the submits in flight are answered first, then unbind_resp and close. */
  private async onUnbind(sequence: number): Promise<void> {
    this.closing = true;
    this.detach();
    const deadline = performance.now() + UNBIND_WAIT_MS;
    while (this.inFlight > 0 && !this.conn.isClosed && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    smppPdus.inc({ command: 'unbind', status: 'ESME_ROK' });
    this.conn.sendHeader(responseTo(COMMAND.unbind), STATUS.ESME_ROK, sequence);
    this.conn.end();
  }
}
