// The ingestion domain's public entry.
export { automationWindowHolds } from './automation';
export { audienceId, bucketOf, universalSearchText, BUCKETS } from './audience-identity';
export { decodeIngest, encodeEventRows, eventTextsOf, framedEvents, triggersPayload, emptyTypedMaps, putTyped, EVENT_COLUMNS, type EventRowItem, type EventTexts, type SharedColumns, type IngestEventRowsMessage, type TypedMaps, type WriterMessage } from './event-rows';
export { KeyFilter, keyHash, loadKeyHash, type KeyHash } from './key-filter';
export { packParts } from './parts';
export { deletedKey, planWrites, touched, userKey, type ContactStates, type StoredEvent, type UsageDelta, type WritePlan } from './apply';
export { type AutomationTrigger, type IngestContactsMessage, type IngestDeleteMessage, type IngestEventsMessage, type IngestMessage, type IngestRejectedMessage } from '../bus/ingest';
export { applyPatch, deleteContact, mergeAudience, versionOf, type AudienceRecord, type DsContactState, type VersionedValue } from './merge';
export { BatchSpecs, capMessages, validateContact, validateEvent, type ContactResult, type EventResult, type NewSpecs, type RefusedSpecs, type SpecView } from './validate';
export { unfaithfulByItem, unfaithfulNumbers, type UnfaithfulNumber } from './numbers';
export { CUSTOM_NAME, EVENT_TYPE, NATIVE_ATTRIBUTES } from './values';
export { ATTRIBUTE_TYPES, type AttributeSpec, type AttributeType, type ContactPatch, type Datasource, type EventParameterSpec, type EventRecord, type EventTypeSpec, type ItemOutcome, type TypedValue } from './types';
export type { ContactReader, ContactView, DatasourceCatalog, IngestAccounts, IngestBus, IngestLag, SpecRecorder, UsageCounts, UsageReader, UsageWindow } from './ports';
