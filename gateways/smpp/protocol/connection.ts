// One TCP connection of an SMPP server of ours (the customer server, the carrier simulator):
// framing of incoming PDUs, sequence numbers and response matching for the requests we send
// (deliver_sm, enquire_link, unbind), and writes through the `smpp` package's Session (which
// encodes our PDUs).
//
// Framing replaces the package's reader on purpose: on a PDU it cannot parse the package
// emits 'error' and never reads the socket again, so one bad PDU silently kills a session.
// Here a PDU whose length is plausible is always consumed whole; the handler answers a body
// that does not parse with generic_nack and the session goes on. A command_length that cannot
// be framed (below the 16-octet header, or above the longest PDU we read, such as 0x7fffffff)
// loses the framing for good: generic_nack, nothing more is read or routed to the connection
// (onLost), and it closes. Skipping an announced length instead would leave a session that
// looks alive while it waits for gigabytes that never come.
import { PDU, type PduOptions, type Session } from 'smpp';
import type { Logger } from '../../../infra/logger';
import { COMMAND, HEADER_LENGTH, headerOnly, isResponse, readHeader, type Header } from './header';
import { STATUS } from './status';

export interface Frame {
  readonly header: Header;
  /** The whole PDU, header included. */
  readonly pdu: Buffer;
}

export interface ConnectionOptions {
  /** Longest PDU read; a longer command_length loses the framing (generic_nack ESME_RINVCMDLEN, then close). */
  readonly maxPduLength: number;
  readonly log: Logger;
  readonly onFrame: (frame: Frame) => void;
  /** The framing is lost: the connection is closing and must get no more PDUs (called once, before onClose). */
  readonly onLost?: () => void;
  readonly onClose: () => void;
}

/** Stop reading while this much of our output waits in the socket (a client that does not read). */
const WRITE_BACKLOG_BYTES = 4 * 1024 * 1024;
const MAX_SEQUENCE = 0x7fffffff;

let nextConnectionId = 1;

export class SmppConnection {
  readonly id = nextConnectionId++;
  readonly remote: string;
  /** The peer's IP address alone (an IPv4-mapped IPv6 address as IPv4): what failed binds are counted by. */
  readonly address: string;
  private sequence = 0;
  private readonly pending = new Map<number, { resolve: (header: Header | undefined) => void; timer: NodeJS.Timeout }>();
  private header: Header | undefined;
  private headerBytes: Buffer | undefined;
  private blocked = false;
  private closedFlag = false;
  private lost = false;
  private corked = false;

  constructor(private readonly session: Session, private readonly options: ConnectionOptions) {
    const socket = session.socket;
    this.remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.address = (socket.remoteAddress ?? '?').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    socket.setNoDelay(true);
    socket.removeAllListeners('readable');
    socket.on('readable', () => this.read());
    socket.on('drain', () => {
      if (!this.blocked) return;
      this.blocked = false;
      this.read();
    });
    session.on('error', (err) => options.log.debug({ err, connection: this.id }, 'smpp: socket error'));
    session.on('close', () => this.closed());
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  /** False once the connection closed or lost its framing: nothing should be routed to it. */
  get isUsable(): boolean {
    return !this.closedFlag && !this.lost;
  }

  /** Sends a PDU encoded by the `smpp` package (a response carries the request's sequence_number). */
  send(command: string, options: PduOptions): void {
    if (this.closedFlag) return;
    this.cork();
    this.session.send(new PDU(command, options));
  }

  /** Sends a header-only PDU: an error response, generic_nack, enquire_link_resp, unbind_resp. */
  sendHeader(commandId: number, status: number, sequence: number): void {
    this.sendBytes(headerOnly(commandId, status, sequence));
  }

  /** Sends an already encoded PDU. */
  sendBytes(pdu: Buffer): void {
    if (this.closedFlag || !this.session.socket.writable) return;
    this.cork();
    this.session.socket.write(pdu);
  }

  /**
   * Collects the PDUs written in this turn of the event loop into one socket write: a window of
   * answers completing together costs one syscall instead of one each.
   */
  private cork(): void {
    if (this.corked) return;
    this.corked = true;
    this.session.socket.cork();
    process.nextTick(() => {
      this.corked = false;
      this.session.socket.uncork();
    });
  }

  /**
   * Sends a request and resolves with the header of the client's response (a generic_nack
   * counts), or undefined when none comes within `timeoutMs` or the connection closes first.
   */
  request(command: string, options: PduOptions, timeoutMs: number): Promise<Header | undefined> {
    if (!this.isUsable) return Promise.resolve(undefined);
    this.sequence = this.sequence >= MAX_SEQUENCE ? 1 : this.sequence + 1;
    const sequence = this.sequence;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(sequence);
        resolve(undefined);
      }, timeoutMs);
      this.pending.set(sequence, { resolve, timer });
      this.cork();
      this.session.send(new PDU(command, { ...options, sequence_number: sequence }));
    });
  }

  /** Requests in flight (deliver_sm waiting for deliver_sm_resp, ...). */
  get outstanding(): number {
    return this.pending.size;
  }

  /** Ends the connection after what was written is flushed. */
  end(): void {
    if (this.closedFlag) return;
    this.session.close();
    // A client that never closes its side must not keep the socket half-open.
    setTimeout(() => this.session.destroy(), 2000).unref();
  }

  destroy(): void {
    this.session.destroy();
  }

  private settle(header: Header): boolean {
    const waiter = this.pending.get(header.sequence);
    if (!waiter) return false;
    this.pending.delete(header.sequence);
    clearTimeout(waiter.timer);
    waiter.resolve(header);
    return true;
  }

  private closed(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.abandonRequests();
    this.options.onClose();
  }

  /** Requests in flight get no answer any more: their callers learn it now, not at a timeout. */
  private abandonRequests(): void {
    for (const [sequence, waiter] of this.pending) {
      clearTimeout(waiter.timer);
      this.pending.delete(sequence);
      waiter.resolve(undefined);
    }
  }

  /** An unframeable command_length: answer it, stop reading and routing, close. */
  private loseFraming(header: Header): void {
    const reason = header.length < HEADER_LENGTH ? 'command_length below the header size' : `command_length above ${this.options.maxPduLength}`;
    this.options.log.warn({ connection: this.id, commandLength: header.length, reason }, 'smpp: framing lost; closing');
    this.sendHeader(COMMAND.generic_nack, STATUS.ESME_RINVCMDLEN, header.sequence);
    this.lost = true;
    this.abandonRequests();
    this.options.onLost?.();
    this.end();
  }

  private read(): void {
    const socket = this.session.socket;
    while (!this.closedFlag && !this.lost && !this.blocked) {
      if (!this.header) {
        const bytes = socket.read(HEADER_LENGTH) as Buffer | null;
        if (!bytes || bytes.length < HEADER_LENGTH) return;
        const header = readHeader(bytes);
        if (header.length < HEADER_LENGTH || header.length > this.options.maxPduLength) {
          this.loseFraming(header);
          return;
        }
        this.header = header;
        this.headerBytes = bytes;
      }
      const header = this.header;
      const rest = header.length - HEADER_LENGTH;
      let pdu: Buffer;
      if (rest === 0) {
        pdu = this.headerBytes ?? headerOnly(header.commandId, header.status, header.sequence);
      } else {
        const body = socket.read(rest) as Buffer | null;
        if (!body || body.length < rest) return;
        pdu = Buffer.concat([this.headerBytes ?? Buffer.alloc(0), body]);
      }
      this.header = undefined;
      this.headerBytes = undefined;
      if (isResponse(header.commandId) && this.settle(header)) continue;
      try {
        this.options.onFrame({ header, pdu });
      } catch (err) {
        this.options.log.error({ err, connection: this.id, commandId: header.commandId }, 'smpp: PDU handler failed');
        if (!isResponse(header.commandId)) this.sendHeader(COMMAND.generic_nack, STATUS.ESME_RSYSERR, header.sequence);
      }
      if (socket.writableLength > WRITE_BACKLOG_BYTES) this.blocked = true;
    }
  }
}
