// Datasources of a project and their specs (spec 2 §4 specs endpoints, DESIGN §5), in the
// `accounts` KV bucket beside organizations and projects:
//   datasource.<id>                     the datasource
//   dsattr.<datasource>.<name>          an attribute spec (custom names only; natives are fixed)
//   dsevent.<datasource>.<eventType>    an event type spec
//   dsparam.<datasource>.<type>.<name>  an event parameter spec
//   dscount.<datasource>.<kind>         how many names of a kind the datasource inferred
//                                       (attributes, eventTypes, parameters): the cap's
//                                       counter, moved by compare-and-set only
// Names are restricted (core/ingest/values.ts) so that they are valid KV key tokens as they are.
// Written by the admin CLI and, for names a non-strict datasource sees first, by the gateway;
// read on hot paths through the AccountDirectory mirror (DatasourceDirectory below).
import type { KV } from '@nats-io/kv';
import { withRateGrant } from '../core/accounts';
import { newId } from '../core/ids';
import { INFERRED_CAPS, NATIVE_ATTRIBUTES } from '../core/ingest/values';
import type { AttributeSpec, AttributeType, Datasource, EventParameterSpec, EventTypeSpec } from '../core/ingest/types';
import type { DatasourceCatalog, SpecRecorder } from '../core/ingest/ports';
import type { NewSpecs, RefusedSpecs, SpecView } from '../core/ingest/validate';
import { isRevisionConflict } from '../infra/nats';
import type { AccountDirectory } from './account-directory';
import { AccountConflictError, AccountNotFoundError, type AccountStore } from './account-store';
import { listRecords, readRecord } from './kv-records';

export const DATASOURCE_KEYS = {
  datasource: (id: string) => `datasource.${id}`,
  attribute: (datasourceId: string, name: string) => `dsattr.${datasourceId}.${name}`,
  eventType: (datasourceId: string, eventType: string) => `dsevent.${datasourceId}.${eventType}`,
  parameter: (datasourceId: string, eventType: string, name: string) => `dsparam.${datasourceId}.${eventType}.${name}`,
  inferredCount: (datasourceId: string, kind: SpecKind) => `dscount.${datasourceId}.${kind}`,
} as const;

type SpecKind = keyof typeof INFERRED_CAPS;

/** Where each kind's specs are, for counting the inferred ones of a datasource that has no counter yet. */
const SPEC_PREFIX: Record<SpecKind, string> = { attributes: 'dsattr', eventTypes: 'dsevent', parameters: 'dsparam' };

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
   * keeps the first writer's type when two requests introduce the same name at once. Each kind
   * is capped per datasource (INFERRED_CAPS): slots are taken from a counter by
   * compare-and-set before any name is created, so concurrent requests (any gateway) never
   * pass the cap together. Returns the names refused at the cap (in their order, the first
   * ones get the last slots), or null when every name was recorded.
   */
  async recordInferred(datasourceId: string, specs: NewSpecs): Promise<RefusedSpecs | null> {
    const at = now();
    const [attributes, eventTypes, parameters] = await Promise.all([
      this.createCapped(datasourceId, 'attributes', [...specs.attributes].map(([name, type]) => ({ key: DATASOURCE_KEYS.attribute(datasourceId, name), id: name, value: { name, type, source: 'inferred', createdAt: at } satisfies AttributeSpec }))),
      this.createCapped(datasourceId, 'eventTypes', [...specs.eventTypes].map((eventType) => ({ key: DATASOURCE_KEYS.eventType(datasourceId, eventType), id: eventType, value: { eventType, source: 'inferred', createdAt: at } satisfies EventTypeSpec }))),
      this.createCapped(datasourceId, 'parameters', [...specs.parameters].map(([id, p]) => ({ key: DATASOURCE_KEYS.parameter(datasourceId, p.eventType, p.name), id, value: { ...p, source: 'inferred', createdAt: at } satisfies EventParameterSpec }))),
    ]);
    return attributes.size + eventTypes.size + parameters.size === 0 ? null : { attributes, eventTypes, parameters };
  }

  /** Creates the specs that get a slot under the cap of `kind`; returns the ids of the others. */
  private async createCapped(datasourceId: string, kind: SpecKind, specs: ReadonlyArray<{ key: string; id: string; value: unknown }>): Promise<Set<string>> {
    if (specs.length === 0) return new Set();
    const granted = await this.moveCount(datasourceId, kind, (count) => Math.max(0, Math.min(specs.length, INFERRED_CAPS[kind] - count)));
    const created = await Promise.all(specs.slice(0, granted).map((s) => this.createOnce(s.key, s.value)));
    // A name another request created meanwhile took no slot of its own: give this one back.
    const existed = created.filter((c) => !c).length;
    if (existed > 0) await this.moveCount(datasourceId, kind, () => -existed);
    return new Set(specs.slice(granted).map((s) => s.id));
  }

  /** Adds `delta(count)` to the inferred count of `kind` by compare-and-set (retried on conflict); returns the delta applied. */
  private async moveCount(datasourceId: string, kind: SpecKind, delta: (count: number) => number): Promise<number> {
    const key = DATASOURCE_KEYS.inferredCount(datasourceId, kind);
    for (;;) {
      const entry = await this.kv.get(key);
      const exists = entry !== null && entry.operation === 'PUT';
      // A datasource older than its counter: counted once from its specs.
      const count = exists ? Number(entry.string()) : await this.countInferred(datasourceId, kind);
      const change = delta(count);
      if (change === 0) return 0;
      try {
        if (exists) await this.kv.update(key, String(Math.max(0, count + change)), entry.revision);
        else await this.kv.create(key, String(Math.max(0, count + change)));
        return change;
      } catch (err) {
        if (!isRevisionConflict(err)) throw err;
      }
    }
  }

  private async countInferred(datasourceId: string, kind: SpecKind): Promise<number> {
    const specs = await listRecords<{ source: string }>(this.kv, `${SPEC_PREFIX[kind]}.${datasourceId}`);
    return specs.filter((s) => s.source === 'inferred').length;
  }

  /** True if it created the key, false if the key existed. */
  private async createOnce(key: string, value: unknown): Promise<boolean> {
    try {
      await this.kv.create(key, JSON.stringify(value));
      return true;
    } catch (err) {
      if (!isRevisionConflict(err)) throw err;
      return false;
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
