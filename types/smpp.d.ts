// Ambient types for the untyped `smpp` package (node-smpp 0.5): only what the project uses.
// Field names are the SMPP specification's; values decoded by the library keep its shapes
// (short_message becomes { udh?, message } once data_coding is known).
declare module 'smpp' {
  import type { Socket, AddressInfo } from 'node:net';

  /** An outgoing short_message / message_payload: raw bytes, a string, or UDH + body. */
  export type MessageInput = Buffer | string | { readonly udh?: Buffer; readonly message: string | Buffer };
  /** A received short_message / message_payload after the library's decoding. */
  export interface DecodedMessage {
    /** Information elements of the UDH (each starting with its IEI), without the UDHL byte. */
    readonly udh?: Buffer[];
    readonly message: string | Buffer;
  }

  export interface PduOptions {
    command_status?: number;
    sequence_number?: number;
    system_id?: string;
    password?: string;
    system_type?: string;
    interface_version?: number;
    addr_ton?: number;
    addr_npi?: number;
    address_range?: string;
    service_type?: string;
    source_addr_ton?: number;
    source_addr_npi?: number;
    source_addr?: string;
    dest_addr_ton?: number;
    dest_addr_npi?: number;
    destination_addr?: string;
    esm_class?: number;
    protocol_id?: number;
    priority_flag?: number;
    registered_delivery?: number;
    data_coding?: number;
    short_message?: MessageInput;
    message_payload?: MessageInput;
    message_id?: string;
    receipted_message_id?: string;
    message_state?: number;
    sc_interface_version?: number;
  }

  export class PDU {
    constructor(command: string, options?: PduOptions);
    readonly command: string;
    readonly command_id: number;
    readonly command_status: number;
    sequence_number: number;
    readonly system_id?: string;
    readonly password?: string;
    readonly interface_version?: number;
    readonly source_addr_ton?: number;
    readonly source_addr_npi?: number;
    readonly source_addr?: string;
    readonly dest_addr_ton?: number;
    readonly dest_addr_npi?: number;
    readonly destination_addr?: string;
    readonly esm_class?: number;
    readonly registered_delivery?: number;
    readonly data_coding?: number | null;
    readonly short_message?: DecodedMessage | Buffer | string;
    readonly message_payload?: DecodedMessage | Buffer | string;
    readonly message_id?: string;
    readonly receipted_message_id?: string;
    readonly message_state?: number;
    readonly schedule_delivery_time?: Date | string;
    isResponse(): boolean;
    response(options?: PduOptions): PDU;
  }

  export type PduCallback = (pdu: PDU) => void;

  export interface Session {
    readonly socket: Socket;
    send(pdu: PDU, responseCallback?: PduCallback, sendCallback?: PduCallback): boolean;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    pause(): void;
    resume(): void;
    bind_transceiver(options: PduOptions, responseCallback?: PduCallback): boolean;
    submit_sm(options: PduOptions, responseCallback?: PduCallback): boolean;
    deliver_sm(options: PduOptions, responseCallback?: PduCallback): boolean;
    enquire_link(options: PduOptions, responseCallback?: PduCallback): boolean;
    unbind(options: PduOptions, responseCallback?: PduCallback): boolean;
    on(event: 'connect' | 'close', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
    on(event: string, listener: PduCallback): this;
    once(event: 'connect' | 'close', listener: () => void): this;
    once(event: 'error', listener: (err: Error) => void): this;
    removeAllListeners(event?: string): this;
  }

  export interface Server {
    readonly sessions: Session[];
    listen(port: number, host: string, callback: () => void): this;
    close(callback?: (err?: Error) => void): this;
    address(): AddressInfo | string | null;
    on(event: 'error', listener: (err: Error) => void): this;
    once(event: 'error', listener: (err: Error) => void): this;
    removeListener(event: 'error', listener: (err: Error) => void): this;
  }

  export function createServer(listener: (session: Session) => void): Server;
  export function connect(options: { host: string; port: number }, listener?: () => void): Session;

  export const errors: Readonly<Record<string, number>>;
}
