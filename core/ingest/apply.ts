// What the ingest writer does with a run of INGEST stream messages, in stream order, as a
// pure function over the contact states it has loaded: apply contact patches and deletions,
// decide each event (stored, duplicate, or skipped for want of a contact: spec 2 §3), and
// collect the rows, triggers and usage to write. The caller loads states and known event ids
// before, and writes the plan after (stores/audience-writer.ts).
import { framedEvents, triggersPayload, type EventRowItem, type SharedColumns, type WriterMessage } from './event-rows';
import { applyPatch, deleteContact, versionOf, type DsContactState } from './merge';
import type { ContactPatch } from './types';

/** Contact states by user: `<project>\u0000<user>` → datasource → state. */
export type ContactStates = Map<string, Map<string, DsContactState>>;

export const userKey = (projectId: string, userId: string): string => `${projectId}\u0000${userId}`;

/** An event to store: where it goes, and its row as the gateway serialized it (core/ingest/event-rows.ts: the shared columns put in at `cut` and in front, the version appended on insert). */
export interface StoredEvent {
  readonly projectId: string;
  readonly datasourceId: string;
  readonly userId: string;
  readonly eventId: string;
  readonly row: Buffer;
  readonly shared: SharedColumns | null;
  readonly cut: number;
  readonly version: number;
}

export interface UsageDelta {
  readonly datasourceId: string;
  readonly endpoint: 'contacts' | 'events' | 'delete';
  readonly minute: number;
  requests: number;
  accepted: number;
  failed: number;
  duplicates: number;
  skipped: number;
}

export interface WritePlan {
  /** Users whose datasource states changed: their ds rows and audience record are rewritten. */
  readonly changedUsers: Map<string, { projectId: string; userId: string; version: number; datasources: Set<string> }>;
  /** The events to insert: their ids reach event_keys through the same insert (migration 0006); an event a later deletion of the run drops takes its id along. */
  readonly events: StoredEvent[];
  /** Events of these (project, datasource, user) already in ClickHouse are deleted first. */
  readonly deletions: Array<{ projectId: string; datasourceId: string; userId: string }>;
  /** Ids of the deleted contacts' stored events: unused again (deleted from event_keys first), so a re-sent one is a new event. */
  readonly releasedKeys: Array<{ datasourceId: string; eventId: string }>;
  /** One message per ingestion request with trigger-worthy events (AutomationTriggers as JSON bytes, core/bus/ingest.ts); msgID `ingest-<stream sequence>`. */
  readonly triggers: Array<{ msgId: string; project: string; data: Buffer }>;
  readonly usage: UsageDelta[];
}

export interface PlanInput {
  readonly messages: ReadonlyArray<{ readonly seq: number; readonly message: WriterMessage }>;
  readonly states: ContactStates;
  /** Whether `<datasource>:<event id>` was stored by an earlier flush. */
  readonly storedBefore: (datasourceId: string, eventId: string) => boolean;
  /** Ids of the events an earlier flush stored for a contact this run deletes (keyed by deletedKey). */
  readonly eventsOfDeleted?: ReadonlyMap<string, readonly string[]>;
}

/** Key of a contact of a datasource in PlanInput.eventsOfDeleted. */
export const deletedKey = (datasourceId: string, userId: string): string => `${datasourceId}\u0000${userId}`;

/** The users and event keys a run of messages touches, for the caller to load beforehand. */
export function touched(messages: PlanInput['messages']): {
  users: Array<{ projectId: string; userId: string }>;
  eventKeys: Array<{ datasourceId: string; eventId: string }>;
  deleted: Array<{ projectId: string; datasourceId: string; userId: string }>;
} {
  const users = new Map<string, { projectId: string; userId: string }>();
  const deleted = new Map<string, { projectId: string; datasourceId: string; userId: string }>();
  const eventKeys = new Map<string, { datasourceId: string; eventId: string }>();
  const addUser = (projectId: string, userId: string): void => { users.set(userKey(projectId, userId), { projectId, userId }); };
  for (const { message } of messages) {
    if (message.kind === 'contacts') for (const c of message.contacts) addUser(message.projectId, c.userId);
    else if (message.kind === 'delete') {
      addUser(message.projectId, message.userId);
      deleted.set(deletedKey(message.datasourceId, message.userId), { projectId: message.projectId, datasourceId: message.datasourceId, userId: message.userId });
    }
    else if (message.kind === 'events') {
      for (const { event } of message.items) {
        addUser(message.projectId, event.userId);
        eventKeys.set(`${message.datasourceId}:${event.eventId}`, { datasourceId: message.datasourceId, eventId: event.eventId });
      }
    } else if (message.kind === 'eventRows') {
      for (const { userId, eventId } of message.items) {
        addUser(message.projectId, userId);
        eventKeys.set(`${message.datasourceId}:${eventId}`, { datasourceId: message.datasourceId, eventId });
      }
    }
  }
  return { users: [...users.values()], eventKeys: [...eventKeys.values()], deleted: [...deleted.values()] };
}

export function planWrites(input: PlanInput): WritePlan {
  const plan: WritePlan = { changedUsers: new Map(), events: [], deletions: [], releasedKeys: [], triggers: [], usage: [] };
  const usage = new Map<string, UsageDelta>();
  const count = (datasourceId: string, endpoint: UsageDelta['endpoint'], at: string): UsageDelta => {
    const minute = Math.floor(Date.parse(at) / 60_000) * 60;
    const key = `${datasourceId}|${endpoint}|${minute}`;
    let delta = usage.get(key);
    if (!delta) {
      delta = { datasourceId, endpoint, minute, requests: 0, accepted: 0, failed: 0, duplicates: 0, skipped: 0 };
      usage.set(key, delta);
    }
    return delta;
  };
  const storedNow = new Set<string>();
  /** Keys stored by an earlier flush whose contact this run deleted: free again. */
  const released = new Set<string>();
  const statesOf = (projectId: string, userId: string): Map<string, DsContactState> => {
    const key = userKey(projectId, userId);
    let states = input.states.get(key);
    if (!states) {
      states = new Map();
      input.states.set(key, states);
    }
    return states;
  };
  const changed = (projectId: string, userId: string, datasourceId: string, version: number): void => {
    const key = userKey(projectId, userId);
    const entry = plan.changedUsers.get(key) ?? { projectId, userId, version, datasources: new Set<string>() };
    entry.version = Math.max(entry.version, version);
    entry.datasources.add(datasourceId);
    plan.changedUsers.set(key, entry);
  };
  const upsert = (projectId: string, datasourceId: string, patch: ContactPatch, version: number, at: string): void => {
    const states = statesOf(projectId, patch.userId);
    const next = applyPatch(states.get(datasourceId), datasourceId, patch, version, at);
    if (next !== states.get(datasourceId)) {
      states.set(datasourceId, next);
      changed(projectId, patch.userId, datasourceId, version);
    }
  };

  for (const { seq, message } of input.messages) {
    if (message.kind === 'rejected') {
      const delta = count(message.datasourceId, message.endpoint, message.receivedAt);
      delta.requests += 1;
      delta.failed += message.failed;
      continue;
    }
    if (message.kind === 'delete') {
      const version = versionOf(seq, 0);
      const states = statesOf(message.projectId, message.userId);
      const next = deleteContact(states.get(message.datasourceId), message.datasourceId, version, message.receivedAt);
      if (next !== states.get(message.datasourceId)) {
        states.set(message.datasourceId, next);
        changed(message.projectId, message.userId, message.datasourceId, version);
        plan.deletions.push({ projectId: message.projectId, datasourceId: message.datasourceId, userId: message.userId });
        // The contact's event ids leave with it: a re-sent one after the deletion is a new event
        // (of the contact it re-creates), stored and reported as such, not a silent duplicate.
        for (const eventId of input.eventsOfDeleted?.get(deletedKey(message.datasourceId, message.userId)) ?? []) {
          const key = `${message.datasourceId}:${eventId}`;
          if (!released.has(key)) plan.releasedKeys.push({ datasourceId: message.datasourceId, eventId });
          released.add(key);
        }
        // Events of this flush not yet written go too: the contact and its events leave together.
        for (let i = plan.events.length - 1; i >= 0; i -= 1) {
          const e = plan.events[i] as StoredEvent;
          if (e.projectId === message.projectId && e.datasourceId === message.datasourceId && e.userId === message.userId) {
            plan.events.splice(i, 1);
            storedNow.delete(`${e.datasourceId}:${e.eventId}`);
          }
        }
      }
      count(message.datasourceId, 'delete', message.receivedAt).requests += 1;
      continue;
    }
    if (message.kind === 'contacts') {
      message.contacts.forEach((patch, index) => upsert(message.projectId, message.datasourceId, patch, versionOf(seq, index), message.receivedAt));
      const delta = count(message.datasourceId, 'contacts', message.receivedAt);
      if (message.part === undefined) delta.requests += 1;
      delta.accepted += message.contacts.length;
      delta.failed += message.failed;
      continue;
    }
    const delta = count(message.datasourceId, 'events', message.receivedAt);
    if (message.part === undefined) delta.requests += 1;
    delta.failed += message.failed;
    const triggers: EventRowItem[] = [];
    /** Decides one event in input order (after its `_user_data`). */
    const decide = function decide(item: EventRowItem, index: number): void {
      const version = versionOf(seq, index);
      if (item.userData) upsert(message.projectId, message.datasourceId, item.userData, version, message.receivedAt);
      const contact = statesOf(message.projectId, item.userId).get(message.datasourceId);
      if (!contact || contact.deleted) {
        delta.skipped += 1;
        return;
      }
      const key = `${message.datasourceId}:${item.eventId}`;
      if (storedNow.has(key) || (!released.has(key) && input.storedBefore(message.datasourceId, item.eventId))) {
        delta.duplicates += 1;
        return;
      }
      storedNow.add(key);
      delta.accepted += 1;
      plan.events.push({ projectId: message.projectId, datasourceId: message.datasourceId, userId: item.userId, eventId: item.eventId, row: item.row, shared: item.shared, cut: item.cut, version });
      if (item.trigger) triggers.push(item);
    };
    // A message of the earlier format: its texts built as the gateway builds them now.
    (message.kind === 'eventRows' ? message : framedEvents(message)).items.forEach(decide);
    if (triggers.length > 0) {
      plan.triggers.push({ msgId: `ingest-${seq}`, project: message.projectId, data: triggersPayload(message.projectId, message.datasourceId, message.receivedAt, triggers) });
    }
  }
  plan.usage.push(...usage.values());
  return plan;
}
