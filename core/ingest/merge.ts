// Merge rules of contacts (spec 2 §2.1, §3; DESIGN §5), as pure functions over versions:
// - per datasource, an omitted attribute keeps its value and an explicit null clears it;
// - across datasources, one audience record per (project, _user_id) whose every attribute is
//   the latest write of any live datasource (a clear is a write too).
// A version orders every write of the ingest stream (stream sequence × 1000 + item index),
// so applying a write twice, or replaying a batch, changes nothing.
import type { AttributeType, ContactPatch } from './types';

export interface VersionedValue {
  /** null: cleared at `version`. */
  readonly value: unknown;
  readonly type: AttributeType | null;
  readonly version: number;
}

/** One datasource's record of one contact; a deleted one stays as a tombstone so a replayed older write cannot revive it. */
export interface DsContactState {
  readonly datasourceId: string;
  readonly deleted: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly version: number;
  readonly attributes: Readonly<Record<string, VersionedValue>>;
}

export const versionOf = (sequence: number, index: number): number => sequence * 1000 + index;

export function applyPatch(current: DsContactState | undefined, datasourceId: string, patch: ContactPatch, version: number, at: string): DsContactState {
  // Per attribute, so writes applied out of order still converge; only a deletion is a barrier.
  if (current?.deleted && current.version >= version) return current;
  const live = current && !current.deleted ? current : undefined;
  const attributes: Record<string, VersionedValue> = { ...(live?.attributes ?? {}) };
  let changed = live === undefined;
  for (const [name, typed] of Object.entries(patch.attributes)) {
    const previous = attributes[name];
    if (previous && previous.version >= version) continue;
    attributes[name] = typed === null ? { value: null, type: null, version } : { value: typed.value, type: typed.type, version };
    changed = true;
  }
  if (!changed && live) return live;
  const latest = Math.max(live?.version ?? 0, version);
  return { datasourceId, deleted: false, createdAt: live?.createdAt ?? at, updatedAt: latest === version ? at : (live as DsContactState).updatedAt, version: latest, attributes };
}

/** DELETE /stream/contacts/{userId}: the datasource's record becomes a tombstone (no-op when older). */
export function deleteContact(current: DsContactState | undefined, datasourceId: string, version: number, at: string): DsContactState {
  if (current && current.version >= version) return current;
  return { datasourceId, deleted: true, createdAt: current?.createdAt ?? at, updatedAt: at, version, attributes: {} };
}

/** The audience record of one (project, user): the latest write of each attribute over live datasources. */
export interface AudienceRecord {
  readonly datasourceIds: readonly string[];
  readonly attributes: Readonly<Record<string, { value: unknown; type: AttributeType }>>;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function mergeAudience(all: readonly DsContactState[]): AudienceRecord | null {
  if (all.length === 1) return single(all[0] as DsContactState);
  const states = all.filter((s) => !s.deleted);
  if (states.length === 0) return null;
  const latest = new Map<string, VersionedValue>();
  for (const state of states) {
    for (const [name, entry] of Object.entries(state.attributes)) {
      const seen = latest.get(name);
      if (!seen || entry.version > seen.version) latest.set(name, entry);
    }
  }
  const attributes: Record<string, { value: unknown; type: AttributeType }> = {};
  for (const [name, entry] of latest) if (entry.value !== null && entry.type !== null) attributes[name] = { value: entry.value, type: entry.type };
  const sorted = [...states].sort((a, b) => a.datasourceId.localeCompare(b.datasourceId));
  return {
    datasourceIds: sorted.map((s) => s.datasourceId),
    attributes,
    createdAt: states.map((s) => s.createdAt).sort()[0] as string,
    updatedAt: states.map((s) => s.updatedAt).sort().at(-1) as string,
  };
}

/** mergeAudience of one datasource's record (most contacts): the same record, without the maps and sorts the merge of several needs. */
function single(state: DsContactState): AudienceRecord | null {
  if (state.deleted) return null;
  const attributes: Record<string, { value: unknown; type: AttributeType }> = {};
  for (const [name, entry] of Object.entries(state.attributes)) if (entry.value !== null && entry.type !== null) attributes[name] = { value: entry.value, type: entry.type };
  return { datasourceIds: [state.datasourceId], attributes, createdAt: state.createdAt, updatedAt: state.updatedAt };
}
