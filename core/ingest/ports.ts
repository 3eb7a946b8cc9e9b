// What the ingestion gateway needs, as interfaces the stores implement (stores/datasource-store.ts,
// ingest-bus.ts, ingest-usage.ts, audience-reader.ts): HTTP handlers take these, never the stores.
import type { Authenticator } from '../accounts/ports';
import type { Organization, Project } from '../accounts/types';
import type { IngestMessage } from '../bus/ingest';
import type { AttributeSpec, Datasource, EventParameterSpec, EventTypeSpec } from './types';
import type { NewSpecs, RefusedSpecs, SpecView } from './validate';

export interface IngestAccounts extends Authenticator {
  org(id: string): Organization | undefined;
  project(id: string): Project | undefined;
}

/** Datasources and their specs as the gateway reads them (an in-memory mirror: no round trip). */
export interface DatasourceCatalog {
  datasource(id: string): Datasource | undefined;
  attributes(datasourceId: string): AttributeSpec[];
  eventTypes(datasourceId: string): Array<EventTypeSpec & { parameters: EventParameterSpec[] }>;
  specView(datasource: Datasource): SpecView;
}

/** Records names a non-strict datasource saw first (typed by their first value), up to the datasource's caps (INFERRED_CAPS). */
export interface SpecRecorder {
  /** The names refused at a cap, or null when every name was recorded. */
  recordInferred(datasourceId: string, specs: NewSpecs): Promise<RefusedSpecs | null>;
}

/** How far the ingest writer is behind what this gateway published (a 0 lag: it has applied everything). */
export interface IngestLag {
  /** Age of the oldest message this gateway published that the writer has not applied yet. */
  readonly seconds: number;
  /** Messages this gateway published that the writer has not applied yet. */
  readonly unapplied: number;
}

/** The INGEST stream: a publish that resolves once stored, and the writer's progress. */
export interface IngestBus {
  publish(message: IngestMessage): Promise<number>;
  /** True once the writer has applied stream sequence `seq`, false after `timeoutMs`. */
  waitApplied(seq: number, timeoutMs: number): Promise<boolean>;
  /** The writer's lag behind this gateway's publishes (read without a round trip). */
  lag(): IngestLag;
}

export interface UsageCounts {
  readonly requests: number;
  readonly accepted: number;
  readonly failed: number;
  readonly duplicates: number;
  readonly skipped: number;
}

export type UsageWindow = Record<'contacts' | 'events' | 'delete', UsageCounts>;

export interface UsageReader {
  recent(datasourceId: string): Promise<{ lastHour: UsageWindow; lastDay: UsageWindow }>;
}

/** One contact as stored: the datasource's record, the merged audience record, its event count. */
export interface ContactView {
  readonly _user_id: string;
  readonly audienceId: string;
  /** This datasource's attributes (cleared ones absent). */
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly audience: { readonly datasourceIds: readonly string[]; readonly attributes: Readonly<Record<string, unknown>> };
  readonly events: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface ContactReader {
  contact(projectId: string, datasourceId: string, userId: string): Promise<ContactView | null>;
}
