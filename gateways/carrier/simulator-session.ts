// One connection to the carrier simulator: binds with the configured system_id/password
// (v3.4 and v5.0), submit_sm answered by the number table, enquire_link, unbind; deliver_sm
// (receipts, MO) sent by the simulator through `deliver`. Framing and body reading are the SMPP
// package's, as on the customer server, so a corrupt PDU gets generic_nack instead of killing
// the session, and an unframeable command_length closes it.
import { randomBytes } from 'node:crypto';
import type { PduOptions, Session } from 'smpp';
import { outcomeFor, type ReceiptStep } from '../../core/carrier';
import type { Logger } from '../../infra/logger';
import {
  COMMAND, CorruptPduError, isResponse, readBind, readSubmitSm, responseTo, SmppConnection, STATUS, UNSUPPORTED_REQUESTS, withMessageId,
  type Frame, type Header, type SubmitSm,
} from '../smpp/protocol';

type BindMode = 'transmitter' | 'receiver' | 'transceiver';

/** What a session needs of the simulator. */
export interface SimulatorContext {
  readonly systemId: string;
  readonly password: string;
  readonly log: Logger;
  bound(session: SimulatorSession): void;
  submitted(session: SimulatorSession, submit: SubmitSm, messageId: string, steps: readonly ReceiptStep[]): void;
  closed(session: SimulatorSession): void;
}

const BIND_MODES: ReadonlyMap<number, BindMode> = new Map([
  [COMMAND.bind_transmitter, 'transmitter'],
  [COMMAND.bind_receiver, 'receiver'],
  [COMMAND.bind_transceiver, 'transceiver'],
]);

/** A test SMSC is lenient about size: message_payload up to this much is read. */
const MAX_PDU_LENGTH = 65_536;
const SIMULATOR_SYSTEM_ID = 'SIMULATOR';

export class SimulatorSession {
  mode: BindMode | undefined;
  systemId = '';
  readonly conn: SmppConnection;

  constructor(session: Session, private readonly sim: SimulatorContext) {
    this.conn = new SmppConnection(session, {
      maxPduLength: MAX_PDU_LENGTH,
      log: sim.log,
      onFrame: (frame) => this.onFrame(frame),
      onClose: () => sim.closed(this),
    });
  }

  get canReceive(): boolean {
    return this.conn.isUsable && (this.mode === 'receiver' || this.mode === 'transceiver');
  }

  private get canSubmit(): boolean {
    return this.mode === 'transmitter' || this.mode === 'transceiver';
  }

  /** Sends a deliver_sm; resolves with the response header, or undefined (no answer in time, or closed). */
  deliver(options: PduOptions, timeoutMs: number): Promise<Header | undefined> {
    return this.conn.request('deliver_sm', options, timeoutMs);
  }

  private onFrame(frame: Frame): void {
    const { commandId, sequence } = frame.header;
    if (isResponse(commandId)) return; // a late or unsolicited response
    try {
      const mode = BIND_MODES.get(commandId);
      if (mode) return this.onBind(frame, mode);
      switch (commandId) {
        case COMMAND.submit_sm:
          return this.onSubmit(frame);
        case COMMAND.enquire_link:
          return this.conn.sendHeader(responseTo(commandId), STATUS.ESME_ROK, sequence);
        case COMMAND.unbind:
          this.mode = undefined;
          this.conn.sendHeader(responseTo(commandId), STATUS.ESME_ROK, sequence);
          return this.conn.end();
        default:
          if (UNSUPPORTED_REQUESTS.has(commandId)) return this.conn.sendHeader(responseTo(commandId), STATUS.ESME_RINVCMDID, sequence);
          return this.conn.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDID, sequence);
      }
    } catch (err) {
      if (!(err instanceof CorruptPduError)) throw err;
      this.sim.log.debug({ reason: err.message }, 'simulator: corrupt PDU answered with generic_nack');
      return this.conn.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDLEN, sequence);
    }
  }

  private onBind(frame: Frame, mode: BindMode): void {
    const { commandId, sequence } = frame.header;
    if (this.mode) return this.conn.sendHeader(responseTo(commandId), STATUS.ESME_RALYBND, sequence);
    const request = readBind(frame.pdu);
    if (request.systemId !== this.sim.systemId || request.password !== this.sim.password) {
      this.sim.log.warn({ systemId: request.systemId }, 'simulator: bind refused (wrong credentials)');
      this.conn.sendHeader(responseTo(commandId), STATUS.ESME_RINVPASWD, sequence);
      return this.conn.end();
    }
    this.mode = mode;
    this.systemId = request.systemId;
    // Answer in the version the client asked for: 0x50 for v5.0, 0x34 for v3.4 and older.
    const version = request.interfaceVersion >= 0x50 ? 0x50 : 0x34;
    this.conn.send(`bind_${mode}_resp`, { sequence_number: sequence, system_id: SIMULATOR_SYSTEM_ID, sc_interface_version: version });
    this.sim.log.debug({ mode, version }, 'simulator: session bound');
    this.sim.bound(this);
  }

  private onSubmit(frame: Frame): void {
    const { sequence } = frame.header;
    if (!this.canSubmit) return this.conn.sendHeader(responseTo(COMMAND.submit_sm), STATUS.ESME_RINVBNDSTS, sequence);
    const submit = readSubmitSm(frame.pdu);
    const outcome = outcomeFor(submit.destinationAddr);
    if (outcome.submitStatus !== STATUS.ESME_ROK) return this.conn.sendHeader(responseTo(COMMAND.submit_sm), outcome.submitStatus, sequence);
    const messageId = randomBytes(8).toString('hex');
    this.conn.sendBytes(withMessageId(responseTo(COMMAND.submit_sm), sequence, messageId));
    this.sim.submitted(this, submit, messageId, outcome.receipts);
  }
}
