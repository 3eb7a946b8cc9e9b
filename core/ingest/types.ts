// Ingestion domain (spec 2): datasources of a project, their attribute and event specs, and
// the records a validated batch turns into. Wire shapes (the spec's JSON) live in
// schemas/ingest.ts (with ATTRIBUTE_TYPES, the types an attribute holds); bus payloads in core/bus/ingest.ts.
import { ATTRIBUTE_TYPES } from '../../schemas/ingest';
export { ATTRIBUTE_TYPES } from '../../schemas/ingest';
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];

/** Who typed an attribute: the product (native `_` names), an operator (declared), or the first value seen (inferred). */
export type SpecSource = 'native' | 'declared' | 'inferred';

export interface Datasource {
  readonly id: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly name: string;
  /** Strict datasources refuse attribute names, event types and parameters not in their specs. */
  readonly strict: boolean;
  readonly createdAt: string;
  /** Per-endpoint requests-per-minute ceilings of this datasource (else the defaults). */
  readonly rateLimits?: Readonly<Record<string, number>>;
}

export interface AttributeSpec {
  readonly name: string;
  readonly type: AttributeType;
  readonly source: SpecSource;
  readonly createdAt: string;
}

export interface EventTypeSpec {
  readonly eventType: string;
  readonly source: Exclude<SpecSource, 'native'>;
  readonly createdAt: string;
}

export interface EventParameterSpec {
  readonly eventType: string;
  readonly name: string;
  readonly type: AttributeType;
  readonly source: Exclude<SpecSource, 'native'>;
  readonly createdAt: string;
}

/** A validated value with its type; `null` value means "clear this attribute" (spec 2 §2.1 rule 2). */
export interface TypedValue {
  readonly type: AttributeType;
  readonly value: unknown;
}

/** What one contact item changes: attributes to set, and attributes (value null) to clear. */
export interface ContactPatch {
  readonly userId: string;
  readonly attributes: Readonly<Record<string, TypedValue | null>>;
}

export interface EventRecord {
  readonly userId: string;
  readonly eventId: string;
  readonly eventType: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly eventDate: string;
  readonly parameters: Readonly<Record<string, TypedValue>>;
  /** Inside the ±1 h automation window at reception (spec 2 §4 rule 6). */
  readonly triggers: boolean;
}

/** Per-item outcome of a batch (spec 2 §2.3; `_event_id` on events, DESIGN §5). */
export interface ItemOutcome {
  readonly status: 'success' | 'error';
  readonly _user_id: string | null;
  readonly _event_id?: string | null;
  readonly errors?: Readonly<Record<string, string[]>>;
}

export type IngestEndpoint = 'contacts' | 'events' | 'delete' | 'stream' | 'specs';
