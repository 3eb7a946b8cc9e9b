// Identity of an audience record (DESIGN §5): one per (project, _user_id) across datasources.
// The id is derived, so every writer and replay computes the same one; `_bucket` is a stable
// hash of it modulo 200 for repeatable sampling (spec 3 §2.3): the id's own leading 32 bits.
import { hash } from 'node:crypto';

export const BUCKETS = 200;

/** Recent ids, so that a busy contact's events do not hash again (a hash costs ~1 µs, the event's whole plan little more). */
const recentIds = new Map<string, string>();
const RECENT_IDS = 100_000;

export function audienceId(projectId: string, userId: string): string {
  const key = `${projectId}\u0000${userId}`;
  const known = recentIds.get(key);
  if (known !== undefined) return known;
  // The one-shot hash: a Hash object per id (createHash) cost 2.0–2.6 µs against 0.6–1.1 (2026-11-27).
  const hex = hash('sha256', key, 'hex');
  const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
  if (recentIds.size >= RECENT_IDS) recentIds.clear();
  recentIds.set(key, id);
  return id;
}

/** The first 32 bits of the id (itself a SHA-256 of project and user id) modulo 200. */
export function bucketOf(audience: string): number {
  return Number.parseInt(audience.slice(0, 8), 16) % BUCKETS;
}

/** The text `_universal_search` matches: user id, email, phone and names, lower-cased. */
export function universalSearchText(userId: string, fields: readonly (string | null | undefined)[]): string {
  return [userId, ...fields].filter((v): v is string => typeof v === 'string' && v.length > 0).join(' ').toLowerCase();
}
