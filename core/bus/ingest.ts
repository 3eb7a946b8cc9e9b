// Payloads of the INGEST stream (subjects in ./names.ts SUBJECTS.ingest*) and of the
// automation trigger stream. One stream message per accepted request, so the ingest writer
// applies a batch in one piece and in request order. Decoded with a JSON Schema at the consumer.
import type { ContactPatch, EventRecord } from './records';

export interface IngestContactsMessage {
  readonly kind: 'contacts';
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  /** Reception time, ISO 8601 UTC. */
  readonly receivedAt: string;
  readonly contacts: readonly ContactPatch[];
  /** Items of the request that failed validation (usage counters). */
  readonly failed: number;
  /** Set on the second and later messages of a request too large for one (infra/bus/ingest-bus.ts): the request is counted once. */
  readonly part?: number;
}

/** What the gateway publishes for an events request; on the stream it travels as `eventRows` frames (core/ingest/event-rows.ts) since 2026-11-27, and messages of this shape already there are still read. */
export interface IngestEventsMessage {
  readonly kind: 'events';
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  readonly receivedAt: string;
  /** In input order; `userData` is upserted before its event (spec 2 §4 rule 7). */
  readonly items: readonly { readonly event: EventRecord; readonly userData: ContactPatch | null }[];
  readonly failed: number;
  readonly part?: number;
}

export interface IngestDeleteMessage {
  readonly kind: 'delete';
  readonly orgId: string;
  readonly projectId: string;
  readonly datasourceId: string;
  readonly receivedAt: string;
  readonly userId: string;
}

/** A request whose every item failed: nothing to store, counted in usage. */
export interface IngestRejectedMessage {
  readonly kind: 'rejected';
  readonly projectId: string;
  readonly datasourceId: string;
  readonly receivedAt: string;
  readonly endpoint: 'contacts' | 'events';
  readonly failed: number;
}

export type IngestMessage = IngestContactsMessage | IngestEventsMessage | IngestDeleteMessage | IngestRejectedMessage;

/** One trigger-worthy event (spec 2 §4 rule 6). */
export interface AutomationTrigger {
  readonly audienceId: string;
  readonly _user_id: string;
  readonly _event_id: string;
  readonly _event_type: string;
  readonly _event_date: string;
  readonly _event_parameters: Readonly<Record<string, unknown>>;
}

/**
 * What automation engines consume on `automation.trigger.<project>`: the triggers of one
 * ingestion request (1 to 100), each trigger-worthy event in exactly one message, exactly
 * once (msgID `ingest-<INGEST stream sequence>`). One message per request, not per event: at
 * tens of thousands of events a second, a JetStream publish per event would cost more than
 * storing the event.
 */
export interface AutomationTriggers {
  readonly project: string;
  readonly datasource: string;
  readonly receivedAt: string;
  readonly triggers: readonly AutomationTrigger[];
}

const typedValue = { type: 'object', required: ['type', 'value'], properties: { type: { type: 'string' } } } as const;
/** A `_user_data` or contacts patch as the INGEST payloads carry it (also in `eventRows` frame headers: core/ingest/event-rows.ts). */
export const CONTACT_PATCH_SCHEMA = {
  type: 'object',
  required: ['userId', 'attributes'],
  properties: { userId: { type: 'string' }, attributes: { type: 'object', additionalProperties: { anyOf: [{ type: 'null' }, typedValue] } } },
} as const;
const header = { orgId: { type: 'string' }, projectId: { type: 'string' }, datasourceId: { type: 'string' }, receivedAt: { type: 'string' } } as const;

/** The INGEST stream's payload schema, registered with the other bus payloads (core/bus/payloads.ts). */
export const INGEST_MESSAGE_SCHEMA = {
  oneOf: [
    { type: 'object', required: ['kind', 'orgId', 'projectId', 'datasourceId', 'receivedAt', 'contacts', 'failed'], properties: { kind: { const: 'contacts' }, ...header, contacts: { type: 'array', items: CONTACT_PATCH_SCHEMA }, failed: { type: 'integer' }, part: { type: 'integer', minimum: 1 } } },
    {
      type: 'object',
      required: ['kind', 'orgId', 'projectId', 'datasourceId', 'receivedAt', 'items', 'failed'],
      properties: {
        kind: { const: 'events' }, ...header, failed: { type: 'integer' }, part: { type: 'integer', minimum: 1 },
        items: {
          type: 'array',
          items: {
            type: 'object',
            required: ['event', 'userData'],
            properties: {
              event: {
                type: 'object',
                required: ['userId', 'eventId', 'eventType', 'eventDate', 'parameters', 'triggers'],
                properties: { userId: { type: 'string' }, eventId: { type: 'string' }, eventType: { type: 'string' }, eventDate: { type: 'string' }, parameters: { type: 'object', additionalProperties: typedValue }, triggers: { type: 'boolean' } },
              },
              userData: { anyOf: [{ type: 'null' }, CONTACT_PATCH_SCHEMA] },
            },
          },
        },
      },
    },
    { type: 'object', required: ['kind', 'orgId', 'projectId', 'datasourceId', 'receivedAt', 'userId'], properties: { kind: { const: 'delete' }, ...header, userId: { type: 'string' } } },
    { type: 'object', required: ['kind', 'projectId', 'datasourceId', 'receivedAt', 'endpoint', 'failed'], properties: { kind: { const: 'rejected' }, projectId: { type: 'string' }, datasourceId: { type: 'string' }, receivedAt: { type: 'string' }, endpoint: { enum: ['contacts', 'events'] }, failed: { type: 'integer' } } },
  ],
} as const;
