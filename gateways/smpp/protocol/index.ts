// The SMPP package shared by our three SMPP endpoints: the customer server (gateways/smpp),
// the carrier connector and the carrier simulator (gateways/carrier). PDU header and command
// ids, the command-status table, strict body readers, data_coding, concatenation (UDH and
// SAR), reassembly of parts, framing of a server-side connection, and the reading of PDUs the
// `smpp` package decoded (the connector's client sessions).
export { COMMAND, commandName, HEADER_LENGTH, headerOnly, isResponse, readHeader, RESPONSE_BIT, responseTo, UNSUPPORTED_REQUESTS, withMessageId, type Header } from './header';
export { STATUS, statusName, type StatusName } from './status';
export { BodyReader, CorruptPduError, readBind, readCancelSm, readQuerySm, readSubmitSm, TLV, tlvInt, type BindRequest, type CancelSm, type QuerySm, type SubmitSm } from './pdu';
export { assembleText, DATA_CODINGS, decodeBody, decodeLenient, firstNonAscii, isDataCoding, type AssembledPart, type DataCoding } from './data-coding';
export { concatenationOf, concatRef, concatUdh, ESM_UDHI, parseConcatUdh, withConcatUdh, type ConcatInfo, type Concatenation } from './concat';
export { concatKey, Reassembler, type Complete, type Part } from './reassembly';
export { SmppConnection, type ConnectionOptions, type Frame } from './connection';
export { deliveredBody, isReceipt, type DeliveredBody } from './decoded';
