// Identity of an audience record (DESIGN §5): one per (project, _user_id) across datasources.
// The id is derived, so every writer and replay computes the same one; `_bucket` is a stable
// hash of it modulo 200 for repeatable sampling (spec 3 §2.3).
import { createHash } from 'node:crypto';

export const BUCKETS = 200;

export function audienceId(projectId: string, userId: string): string {
  const hex = createHash('sha256').update(`${projectId}\u0000${userId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function bucketOf(audience: string): number {
  const digest = createHash('sha256').update(audience).digest();
  return digest.readUInt32BE(0) % BUCKETS;
}

/** The text `_universal_search` matches: user id, email, phone and names, lower-cased. */
export function universalSearchText(userId: string, fields: readonly (string | null | undefined)[]): string {
  return [userId, ...fields].filter((v): v is string => typeof v === 'string' && v.length > 0).join(' ').toLowerCase();
}
