// The bus contract: names of streams, subjects, consumers, buckets, keys, workflows, signals and
// queries, the payload of each, and the decoder every consumer reads them with. Workflow code
// imports ./temporal directly (this entry pulls in ajv).
export { ACCEPTED_FRAME, BUCKETS, CONSUMERS, formatHoldRefs, formatSourceCounts, HEADERS, INGEST_STATE_KEYS, KV_KEYS, parseHoldRefs, parseSourceCounts, STREAMS, SUBJECTS, type HoldRef } from './names';
export { BATCH_MEMO_COUNT, BATCH_MEMO_MESSAGES, batchMemo, QUERIES, SIGNALS, temporalUiLink, UPDATE_IDS, UPDATES, WORKFLOW_IDS, WORKFLOW_TYPES, type CancelScheduledOutcome } from './temporal';
export { BUS_SCHEMAS, type AcceptedPayload, type BusPayloads, type CarrierIdEntry, type DlrAttemptPayload, type InboundPayload, type InboundRecord, type LookupsPayload, type MoReply, type MoRequest, type StatusPayload, type TransitionRecord } from './payloads';
export { findInStateBatch, stateBatchRecord } from './state-batch';
export { checkPayload, decode, decodeCarrierEvents, isUnreadableBusMessage, UnreadableBusMessageError } from './decode';
export { INGEST_MESSAGE_SCHEMA, type AutomationTrigger, type IngestContactsMessage, type IngestDeleteMessage, type IngestEventsMessage, type IngestMessage, type IngestRejectedMessage } from './ingest';
