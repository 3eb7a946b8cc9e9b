// Fields of the untyped `smpp` package that the customer-facing SMPP server sends on top of
// what types/smpp.d.ts declares (query_sm_resp, and the TLVs echoed on receipts).
import 'smpp';

declare module 'smpp' {
  interface PduOptions {
    /** query_sm_resp: a Date is written as an SMPP absolute time; '' when not final. */
    final_date?: Date | string;
    /** query_sm_resp: network error code (one octet). */
    error_code?: number;
    /** TLV 0x0204, echoed from the submit_sm on its receipts. */
    user_message_reference?: number;
  }

  interface PDU {
    /** The encoded PDU (tests build raw and deliberately broken PDUs from it). */
    toBuffer(): Buffer;
    /** bind_*_resp (TLV 0x0210). */
    readonly sc_interface_version?: number;
    /** query_sm_resp, decoded by the package into a Date. */
    readonly final_date?: Date | string;
    readonly error_code?: number;
    readonly user_message_reference?: number;
  }
}
