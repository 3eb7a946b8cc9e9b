// The SMPP gateway's public entry: the server, its options and ports, and the NATS-backed
// implementations of those ports. Internals (framing, reassembly, batching) stay private.
export { DEFAULT_SMPP_OPTIONS, startSmppServer, type BindMode, type SmppOptions, type SmppServer, type SmppServerDeps } from './server';
export type { Deliverable, DeliveryResult, DlrMarker, DlrMarkers, FeedSubscription, MessageReader, ReceiptFeed, SmppDirectory } from './ports';
export { DEFAULT_FEED_OPTIONS, dlrConsumerName, JetStreamReceipts, KvDlrMarkers, markerKey, smsInboundSubject, type ReceiptFeedOptions } from './jetstream';
export { STATE_OF_STATUS, type InboundRecord, type TransitionRecord } from './receipts';
export { STATUS as SMPP_COMMAND_STATUS } from './wire';
