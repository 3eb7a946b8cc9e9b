// Datasources of a project and their specs (spec 2 §4 specs endpoints, DESIGN §5), in the
// `accounts` KV bucket beside organizations and projects:
//   datasource.<id>                     the datasource
//   dsattr.<datasource>.<name>          an attribute spec (custom names only; natives are fixed)
//   dsevent.<datasource>.<eventType>    an event type spec
//   dsparam.<datasource>.<type>.<name>  an event parameter spec
// Names are restricted (core/ingest/values.ts) so that they are valid KV key tokens as they are.
// Written by the admin CLI and, for names a non-strict datasource sees first, by the gateway;
// read on hot paths through the AccountDirectory mirror (DatasourceDirectory below).
import type { KV } from '@nats-io/kv';
import { withRateGrant } from '../core/accounts/rate-grants';
import { newId } from '../core/ids';
import { NATIVE_ATTRIBUTES } from '../core/ingest/values';
import type { AttributeSpec, AttributeType, Datasource, EventParameterSpec, EventTypeSpec } from '../core/ingest/types';
import type { DatasourceCatalog, SpecRecorder } from '../core/ingest/ports';
import type { NewSpecs, SpecView } from '../core/ingest/validate';
import { isRevisionConflict } from '../infra/nats';
import type { AccountDirectory } from './account-directory';
import { AccountConflictError, AccountNotFoundError, type AccountStore } from './account-store';
import { listRecords, readRecord } from './kv-records';

export const DATASOURCE_KEYS = {
  datasource: (id: string) => `datasource.${id}`,
  attribute: (datasourceId: string, name: string) => `dsattr.${datasourceId}.${name}`,
  eventType: (datasourceId: string, eventType: string) => `dsevent.${datasourceId}.${eventType}`,
  parameter: (datasourceId: string, eventType: string, name: string) => `dsparam.${datasourceId}.${eventType}.${name}`,
} as const;

const now = (): string => new Date().toISOString();


export class DatasourceStore implements SpecRecorder {
  constructor(private readonly kv: KV, private readonly accounts: AccountStore) {}

  async create(projectId: string, name: string, options: { strict?: boolean; id?: string } = {}): Promise<Datasource> {
    const project = await this.accounts.getProject(projectId);
    const datasource: Datasource = { id: options.id ?? newId(), orgId: project.orgId, projectId, name, strict: options.strict ?? false, createdAt: now() };
    await this.kv.put(DATASOURCE_KEYS.datasource(datasource.id), JSON.stringify(datasource));
    return datasource;
  }

  async get(id: string): Promise<Datasource> {
    const datasource = await readRecord<Datasource>(this.kv, DATASOURCE_KEYS.datasource(id));
    if (!datasource) throw new AccountNotFoundError(`datasource ${id} not found`);
    return datasource;
  }

  async list(filter: { projectId?: string; orgId?: string } = {}): Promise<Datasource[]> {
    const all = await listRecords<Datasource>(this.kv, 'datasource');
    return all.filter((d) => (!filter.projectId || d.projectId === filter.projectId) && (!filter.orgId || d.orgId === filter.orgId));
  }

  async setStrict(id: string, strict: boolean): Promise<Datasource> {
    const updated: Datasource = { ...(await this.get(id)), strict };
    await this.kv.put(DATASOURCE_KEYS.datasource(id), JSON.stringify(updated));
    return updated;
  }

  async setRateLimit(id: string, endpoint: string, perMinute: number | null): Promise<Datasource> {
    const datasource = await this.get(id);
    const updated: Datasource = { ...datasource, rateLimits: withRateGrant(datasource.rateLimits, endpoint, perMinute) };
    await this.kv.put(DATASOURCE_KEYS.datasource(id), JSON.stringify(updated));
    return updated;
  }

  /** Declares (or re-types) a custom attribute; declared types are enforced on every write. */
  async declareAttribute(datasourceId: string, name: string, type: AttributeType): Promise<AttributeSpec> {
    await this.get(datasourceId);
    if (name.startsWith('_')) throw new AccountConflictError(`${name} is a reserved attribute; its type is fixed`);
    const spec: AttributeSpec = { name, type, source: 'declared', createdAt: now() };
    await this.kv.put(DATASOURCE_KEYS.attribute(datasourceId, name), JSON.stringify(spec));
    return spec;
  }

  async declareEventType(datasourceId: string, eventType: string, parameters: Readonly<Record<string, AttributeType>> = {}): Promise<EventTypeSpec> {
    await this.get(datasourceId);
    const spec: EventTypeSpec = { eventType, source: 'declared', createdAt: now() };
    await this.kv.put(DATASOURCE_KEYS.eventType(datasourceId, eventType), JSON.stringify(spec));
    for (const [name, type] of Object.entries(parameters)) {
      const parameter: EventParameterSpec = { eventType, name, type, source: 'declared', createdAt: now() };
      await this.kv.put(DATASOURCE_KEYS.parameter(datasourceId, eventType, name), JSON.stringify(parameter));
    }
    return spec;
  }

  /**
   * Names a non-strict datasource saw for the first time, typed by their first value. `create`
   * keeps the first writer's type when two requests introduce the same name at once.
   */
  async recordInferred(datasourceId: string, specs: NewSpecs): Promise<void> {
    const at = now();
    const writes: Array<Promise<unknown>> = [];
    for (const [name, type] of specs.attributes) writes.push(this.createOnce(DATASOURCE_KEYS.attribute(datasourceId, name), { name, type, source: 'inferred', createdAt: at } satisfies AttributeSpec));
    for (const eventType of specs.eventTypes) writes.push(this.createOnce(DATASOURCE_KEYS.eventType(datasourceId, eventType), { eventType, source: 'inferred', createdAt: at } satisfies EventTypeSpec));
    for (const p of specs.parameters.values()) writes.push(this.createOnce(DATASOURCE_KEYS.parameter(datasourceId, p.eventType, p.name), { ...p, source: 'inferred', createdAt: at } satisfies EventParameterSpec));
    await Promise.all(writes);
  }

  private async createOnce(key: string, value: unknown): Promise<void> {
    try {
      await this.kv.create(key, JSON.stringify(value));
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
    }
  }
}

/** The datasource side of the accounts mirror: lookups without a round trip. */
export class DatasourceDirectory implements DatasourceCatalog {
  constructor(private readonly directory: AccountDirectory) {}

  datasource(id: string): Datasource | undefined {
    return this.directory.entry<Datasource>(DATASOURCE_KEYS.datasource(id));
  }

  attributes(datasourceId: string): AttributeSpec[] {
    const custom = this.directory.entries<AttributeSpec>(`dsattr.${datasourceId}.`).map(([, spec]) => spec);
    const native: AttributeSpec[] = Object.entries(NATIVE_ATTRIBUTES).map(([name, type]) => ({ name, type, source: 'native', createdAt: '1970-01-01T00:00:00.000Z' }));
    return [...native, ...custom.sort((a, b) => a.name.localeCompare(b.name))];
  }

  eventTypes(datasourceId: string): Array<EventTypeSpec & { parameters: EventParameterSpec[] }> {
    const parameters = this.directory.entries<EventParameterSpec>(`dsparam.${datasourceId}.`).map(([, spec]) => spec);
    return this.directory.entries<EventTypeSpec>(`dsevent.${datasourceId}.`)
      .map(([, spec]) => ({ ...spec, parameters: parameters.filter((p) => p.eventType === spec.eventType).sort((a, b) => a.name.localeCompare(b.name)) }))
      .sort((a, b) => a.eventType.localeCompare(b.eventType));
  }

  specView(datasource: Datasource): SpecView {
    return {
      datasource,
      attributeType: (name) => this.directory.entry<AttributeSpec>(DATASOURCE_KEYS.attribute(datasource.id, name))?.type,
      hasEventType: (eventType) => this.directory.entry<EventTypeSpec>(DATASOURCE_KEYS.eventType(datasource.id, eventType)) !== undefined,
      parameterType: (eventType, name) => this.directory.entry<EventParameterSpec>(DATASOURCE_KEYS.parameter(datasource.id, eventType, name))?.type,
    };
  }
}
