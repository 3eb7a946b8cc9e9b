// Opaque cursors (spec 3 §3, DESIGN §5): base64url of the continuation (the request without
// paging), the project, the last row's sort key, the total and an expiry, then an HMAC-SHA256 of
// all of it. Stateless: any process with the same key continues it. Never trusted input: a
// forged, altered, foreign or expired cursor is a 400.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CURSOR_TTL_MS } from './limits';
import { invalid } from './problems';

export interface CursorState {
  readonly project: string;
  readonly continuation: Record<string, unknown>;
  /** The last row's sort key, then its _user_id. */
  readonly after: readonly [string | number, string];
  readonly limit: number;
  /** The total of the first page: cursor pages do not count again (docs/grammar-b.md). */
  readonly total: number;
}

interface Payload { p: string; q: Record<string, unknown>; k: [string | number, string]; l: number; t: number; x: number }

const mac = (key: Buffer, body: string): Buffer => createHmac('sha256', key).update(body).digest();

export function signCursor(key: Buffer, state: CursorState, now: number, ttlMs = CURSOR_TTL_MS): string {
  const payload: Payload = { p: state.project, q: state.continuation, k: [state.after[0], state.after[1]], l: state.limit, t: state.total, x: now + ttlMs };
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${mac(key, body).toString('base64url')}`;
}

export function openCursor(key: Buffer, cursor: string, project: string, now: number): CursorState {
  const [body, signature, extra] = cursor.split('.');
  if (!body || !signature || extra !== undefined) throw invalid('cursor', 'is not a cursor issued by this service');
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(key, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid('cursor', 'is not a cursor issued by this service (signature mismatch)');
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
  if (payload.x < now) throw invalid('cursor', 'has expired (5 minutes without use); start again without a cursor (spec 3 §3)');
  if (payload.p !== project) throw invalid('cursor', 'belongs to another project');
  return { project: payload.p, continuation: payload.q, after: payload.k, limit: payload.l, total: payload.t };
}
