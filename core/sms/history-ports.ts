// What the read endpoints need from history, as interfaces: the current record of a recent
// message or lookup (KV) and the history behind lists, filters and old ids (ClickHouse).
// Implemented in stores/; handlers take these.
import type { CompiledQuery } from '../filters/grammar-a';
import type { DlrHistoryEntry } from './dlr';

/** Who may see which rows. */
export interface Visibility {
  readonly orgId: string;
  readonly projectId: string | null;
}

export interface GroupCount {
  /** The group's value as text; null for the group of rows without a value. */
  readonly group: string | null;
  readonly count: number;
}

/** The current record by id (read-your-writes, while recent). */
export interface CurrentReader<T> {
  get(id: string): Promise<T | null>;
}

export interface HistoryReader<T> {
  get(visibility: Visibility, id: string): Promise<T | null>;
  list(visibility: Visibility, compiled: CompiledQuery): Promise<T[]>;
  groupCounts(visibility: Visibility, compiled: CompiledQuery): Promise<GroupCount[]>;
}

export interface DlrHistoryReader {
  /** Transitions of one message, oldest first, each with its webhook attempts. */
  forMessage(orgId: string, messageId: string): Promise<DlrHistoryEntry[]>;
  /** The lifecycle workflow that holds the message (docs/lifecycle.md): a batch's id and first run, or the per-message id. */
  workflowOf(messageId: string): Promise<{ id: string; firstRunId: string | null }>;
}
