// ClickHouse side of the ingest writer (tables of infra/migrations/0005_audience.sql): loads
// the contact states and stored event ids a run of stream messages touches, and writes a
// WritePlan (core/ingest/apply.ts) in a handful of batch statements. Bound parameters only.
import { audienceId, bucketOf, deletedKey, emptyTypedMaps, EVENT_COLUMNS, mergeAudience, putTyped, universalSearchText, userKey, type ContactStates, type DsContactState, type TypedValue, type WritePlan } from '../core/ingest';
import type { ClickHouse } from '../infra/clickhouse';
import { toClickHouseTime } from './clickhouse-time';
import { insertCompactRows, insertRowHeads } from './insert-rows';
import type { StoredKeys } from './key-filters';

interface StateRow {
  project_id: string;
  user_id: string;
  datasource_id: string;
  state: string;
}

/**
 * `column IN` a group of ids, bound as one String, newline-joined and split by the statement:
 * binding an Array(String) of a run's ids cost about a fifth more CPU per id on chdb
 * (docs/benchmarks.md, 2026-11-27). User and event ids hold no control characters
 * (core/ingest/values.ts idProblem); a group with a newline in an id anyway (a message from an
 * older validation) is bound as the array, so the answer stays exact.
 */
function inIds(column: string, param: string, ids: readonly string[]): { condition: string; value: string | readonly string[] } {
  return ids.some((id) => id.includes('\n'))
    ? { condition: `${column} IN {${param}:Array(String)}`, value: ids }
    : { condition: `${column} IN (SELECT arrayJoin(splitByChar('\\n', {${param}:String})))`, value: ids.join('\n') };
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const group = groups.get(k);
    if (group) group.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** Filters of the keys event_keys and ds_contacts hold (stores/key-filters.ts), asked before those tables. */
export interface WriterKeyFilters {
  readonly events?: StoredKeys;
  readonly contacts?: StoredKeys;
}

export class AudienceWriter {
  constructor(private readonly ch: ClickHouse, private readonly keys: WriterKeyFilters = {}) {}

  /** Loads the datasource states of users not in `states` yet (a user with none gets an empty map). */
  async loadStates(states: ContactStates, users: ReadonlyArray<{ projectId: string; userId: string }>): Promise<void> {
    const missing = users.filter((u) => !states.has(userKey(u.projectId, u.userId)));
    for (const u of missing) states.set(userKey(u.projectId, u.userId), new Map());
    const toRead = this.keys.contacts ? this.keys.contacts.toLookUp(missing, (u) => u.projectId, (u) => u.userId) : missing;
    for (const [projectId, group] of groupBy(toRead, (u) => u.projectId)) {
      const userIds = group.map((u) => u.userId);
      const users = inIds('user_id', 'users', userIds);
      const result = await this.ch.client.query({
        query: `SELECT project_id, user_id, datasource_id, state FROM ${this.ch.table('ds_contacts')} FINAL WHERE project_id = {project:String} AND ${users.condition}`,
        query_params: { project: projectId, users: users.value },
        format: 'JSONEachRow',
      });
      for (const row of await result.json<StateRow>()) {
        states.get(userKey(row.project_id, row.user_id))?.set(row.datasource_id, JSON.parse(row.state) as DsContactState);
      }
    }
  }

  /** Which of these `<datasource>:<event id>` keys are already stored. */
  async storedEventKeys(keys: ReadonlyArray<{ datasourceId: string; eventId: string }>): Promise<Set<string>> {
    const stored = new Set<string>();
    const toLook = this.keys.events ? this.keys.events.toLookUp(keys, (k) => k.datasourceId, (k) => k.eventId) : keys;
    for (const [datasourceId, group] of groupBy(toLook, (k) => k.datasourceId)) {
      const ids = inIds('event_id', 'ids', group.map((k) => k.eventId));
      const result = await this.ch.client.query({
        query: `SELECT event_id FROM ${this.ch.table('event_keys')} WHERE datasource_id = {ds:String} AND ${ids.condition}`,
        query_params: { ds: datasourceId, ids: ids.value },
        format: 'JSONEachRow',
      });
      for (const row of await result.json<{ event_id: string }>()) stored.add(`${datasourceId}:${row.event_id}`);
    }
    return stored;
  }

  /** The ids of the stored events of contacts a run deletes, keyed by deletedKey (their ids are released with them). */
  async eventsOf(contacts: ReadonlyArray<{ projectId: string; datasourceId: string; userId: string }>): Promise<Map<string, string[]>> {
    const ids = new Map<string, string[]>();
    for (const [key, group] of groupBy(contacts, (c) => `${c.projectId}|${c.datasourceId}`)) {
      const [projectId, datasourceId] = key.split('|') as [string, string];
      const result = await this.ch.client.query({
        query: `SELECT user_id, event_id FROM ${this.ch.table('events')} WHERE project_id = {project:String} AND datasource_id = {ds:String} AND user_id IN {users:Array(String)}`,
        query_params: { project: projectId, ds: datasourceId, users: group.map((c) => c.userId) },
        format: 'JSONEachRow',
      });
      for (const row of await result.json<{ user_id: string; event_id: string }>()) {
        const k = deletedKey(datasourceId, row.user_id);
        const list = ids.get(k);
        if (list) list.push(row.event_id);
        else ids.set(k, [row.event_id]);
      }
    }
    return ids;
  }

  async write(plan: WritePlan, states: ContactStates): Promise<{ contacts: number; events: number }> {
    // Before any insert: a filter being built must not miss a key its scan of the table passed already.
    for (const e of plan.events) this.keys.events?.record(e.datasourceId, e.eventId);
    for (const changed of plan.changedUsers.values()) this.keys.contacts?.record(changed.projectId, changed.userId);
    // Before the events' insert: an id released here and stored again by this plan keeps its new key.
    for (const [datasourceId, group] of groupBy(plan.releasedKeys, (k) => k.datasourceId)) {
      await this.ch.client.command({
        query: `DELETE FROM ${this.ch.table('event_keys')} WHERE datasource_id = {ds:String} AND event_id IN {ids:Array(String)}`,
        query_params: { ds: datasourceId, ids: group.map((k) => k.eventId) },
      });
    }
    for (const [key, group] of groupBy(plan.deletions, (d) => `${d.projectId}|${d.datasourceId}`)) {
      const [projectId, datasourceId] = key.split('|') as [string, string];
      await this.ch.client.command({
        query: `DELETE FROM ${this.ch.table('events')} WHERE project_id = {project:String} AND datasource_id = {ds:String} AND user_id IN {users:Array(String)}`,
        query_params: { project: projectId, ds: datasourceId, users: group.map((d) => d.userId) },
      });
    }
    const dsRows: unknown[][] = [];
    const audienceRows: unknown[][] = [];
    for (const [key, changed] of plan.changedUsers) {
      const userStates = states.get(key) ?? new Map<string, DsContactState>();
      for (const datasourceId of changed.datasources) {
        const state = userStates.get(datasourceId);
        if (!state) continue;
        dsRows.push([changed.projectId, changed.userId, datasourceId, state.version, state.deleted ? 1 : 0, JSON.stringify(state), toClickHouseTime(state.createdAt), toClickHouseTime(state.updatedAt)]);
      }
      audienceRows.push(audienceRow(changed.projectId, changed.userId, changed.version, [...userStates.values()]));
    }
    const insert = async (table: string, values: Record<string, unknown>[]): Promise<void> => {
      if (values.length > 0) await this.ch.client.insert({ table: this.ch.table(table), values, format: 'JSONEachRow' });
    };
    // Events record their keys through event_keys_mv in the same INSERT (migration 0006); an
    // event a later deletion of this run dropped takes its id along (core/ingest/apply.ts).
    // ds_contacts goes last: a replay after a crash reloads the states from it, so they must
    // not be ahead of the audience, events and usage that were derived from them.
    await Promise.all([
      insertCompactRows(this.ch, 'audience', AUDIENCE_COLUMNS, audienceRows, RUN_INSERT_SETTINGS),
      insertRowHeads(this.ch, 'events', EVENT_COLUMNS, plan.events, RUN_INSERT_SETTINGS),
      insert('ingest_usage', plan.usage.map((u) => ({ datasource_id: u.datasourceId, endpoint: u.endpoint, minute: u.minute, requests: u.requests, accepted: u.accepted, failed: u.failed, duplicates: u.duplicates, skipped: u.skipped }))),
    ]);
    await insertCompactRows(this.ch, 'ds_contacts', DS_CONTACT_COLUMNS, dsRows, RUN_INSERT_SETTINGS);
    return { contacts: audienceRows.length, events: plan.events.length };
  }
}

/** Every column of the audience table (migration 0005), in its order. */
const AUDIENCE_COLUMNS = [
  'project_id', 'user_id', 'audience_id', 'version', 'deleted', 'datasource_ids', 'first_name', 'last_name', 'email', 'phone_mobile', 'country_code',
  'client_tags', 'tags', 'is_subscribed_sms', 'date_birthday', 'date_imported', 'geo_lat', 'geo_lon',
  'attrs_string', 'attrs_number', 'attrs_bool', 'attrs_date', 'attrs_array', 'attrs_json', 'bucket', 'universal_search', 'created_at', 'updated_at',
] as const;
const DS_CONTACT_COLUMNS = ['project_id', 'user_id', 'datasource_id', 'version', 'deleted', 'state', 'created_at', 'updated_at'] as const;

/** One audience row, as values in AUDIENCE_COLUMNS order (no intermediate object: spreading one cost more than the rest). */
function audienceRow(projectId: string, userId: string, version: number, states: readonly DsContactState[]): unknown[] {
  const id = audienceId(projectId, userId);
  const merged = mergeAudience(states);
  if (!merged) {
    const now = toClickHouseTime(new Date().toISOString());
    return [projectId, userId, id, version, 1, [], null, null, null, null, null, [], [], null, null, null, null, null, {}, {}, {}, {}, {}, {}, bucketOf(id), '', now, now];
  }
  const attr = (name: string): unknown => merged.attributes[name]?.value ?? null;
  const maps = emptyTypedMaps();
  for (const name in merged.attributes) if (!name.startsWith('_')) putTyped(maps, name, merged.attributes[name] as TypedValue);
  const geo = attr('_geopoint') as { lat: number; lon: number } | null;
  const imported = attr('_date_imported') as string | null;
  const email = attr('_email') as string | null;
  const phone = attr('_phone_mobile') as string | null;
  const first = attr('_first_name') as string | null;
  const last = attr('_last_name') as string | null;
  return [
    projectId, userId, id, version, 0, merged.datasourceIds, first, last, email, phone, attr('_country_code'),
    attr('_client_tags') ?? [], [], attr('_is_subscribed_sms'), attr('_date_birthday'), imported === null ? null : toClickHouseTime(imported), geo?.lat ?? null, geo?.lon ?? null,
    maps.string, maps.number, maps.bool, maps.date, maps.array, maps.json, bucketOf(id), universalSearchText(userId, [email, phone, first, last]),
    toClickHouseTime(merged.createdAt), toClickHouseTime(merged.updatedAt),
  ];
}

/**
 * The audience, events and ds_contacts inserts (and event_keys_mv's insert that events feeds)
 * skip ReplacingMergeTree's insert-time pass that collapses rows of one block sharing a sorting
 * key: a plan holds each contact once (changedUsers is keyed by project and user, each of its
 * datasources once: the keys of audience and ds_contacts) and each (datasource, event id) once
 * (core/ingest/apply.ts; both event tables' keys end in the event id), so the pass never finds a
 * row to drop; a replayed run is another insert, collapsed by merges and FINAL as before.
 * Measured on embedded chdb, 2026-11-27: events (20,000-event inserts, 4 alternating pairs)
 * 8.4–10.7 against 10.2–11.2 ms CPU per 1,000 events; contacts (50,000-contact runs,
 * bench/ingest-write-phase.ts) the pass was 4.4 of the two inserts' 16 ms engine CPU per 1,000
 * contacts (ClickHouse's MergeTreeDataWriterMergingBlocksMicroseconds).
 */
const RUN_INSERT_SETTINGS = { optimize_on_insert: 0 };
