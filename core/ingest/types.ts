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

export type { ContactPatch, EventRecord, TypedValue } from '../bus/records';

/** Per-item outcome of a batch (spec 2 §2.3; `_event_id` on events, DESIGN §5). */
export interface ItemOutcome {
  readonly status: 'success' | 'error';
  readonly _user_id: string | null;
  readonly _event_id?: string | null;
  readonly errors?: Readonly<Record<string, string[]>>;
}

export type IngestEndpoint = 'contacts' | 'events' | 'delete' | 'stream' | 'specs';
