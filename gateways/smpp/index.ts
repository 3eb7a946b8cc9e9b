// The SMPP gateway's public entry: the server, its options and ports, and the NATS-backed
// implementations of those ports. Internals (sessions, batching, the protocol package in
// ./protocol) stay private; the carrier adapters import ./protocol's own entry.
export { startSmppServer } from './server';
export { DEFAULT_SMPP_OPTIONS, type BindMode, type SmppOptions, type SmppServer, type SmppServerDeps } from './options';
export type { BulkAcceptance } from './batcher';
export type { Deliverable, DeliveryResult, FeedSubscription, MessageReader, ReceiptFeed, ScheduledCanceler, SmppDirectory } from './ports';
export { DEFAULT_FEED_OPTIONS, JetStreamReceipts, type ReceiptFeedOptions } from './jetstream';
export { inboundPdu, STATE_OF_STATUS } from './receipts';
export { STATUS as SMPP_COMMAND_STATUS } from './protocol';
