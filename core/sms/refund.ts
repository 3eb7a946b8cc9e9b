// A message's refund, credited exactly once however often its activity runs (DESIGN §4; the
// lifecycle's refund of a message that never reached a carrier, or was canceled before it was
// sent). The credit and its done-marker live in two buckets, so neither order alone is safe: a
// marker first loses the refund if the credit then fails (a nats-server restart did, in npm run
// reliability on 2026-11-26), a credit first pays twice if the marker then fails. So the credit
// carries its key into the balance in the same write, the marker follows, and only then is the
// key dropped from the balance: a retry finds the marker, or the key, or neither (not credited).
import type { OnceKeys } from './lifecycle-ports';

/** The balance side (stores/balance-ledger.ts). */
export interface RefundLedger {
  /** Credits `micros` under `key` unless the balance holds that key already: true when credited now. */
  refundOnce(orgId: string, key: string, micros: number): Promise<boolean>;
  /** Drops `key` from the balance (a no-op when it is not there). */
  forgetRefund(orgId: string, key: string): Promise<void>;
}

/** The refunds running in this process, by key (refundOnce runs those of one key one at a time). */
const running = new Map<string, Promise<boolean>>();

/**
 * Credits `micros` to `orgId` once for `key`: true when this call credited them. Two runs of one
 * key in this process (a local activity's attempt timed out while still running and the worker
 * started the next) go one after the other: at once, the second could find no marker before the
 * first wrote it and then credit after the first had dropped its key, paying twice.
 */
export async function refundOnce(ledger: RefundLedger, marks: OnceKeys, orgId: string, key: string, micros: number): Promise<boolean> {
  const before = running.get(key);
  const run = (async () => {
    if (before) await before.catch(() => undefined);
    return creditOnce(ledger, marks, orgId, key, micros);
  })();
  running.set(key, run);
  try {
    return await run;
  } finally {
    if (running.get(key) === run) running.delete(key);
  }
}

async function creditOnce(ledger: RefundLedger, marks: OnceKeys, orgId: string, key: string, micros: number): Promise<boolean> {
  if (await marks.has(key)) {
    // Done before; the key may still sit in the balance if that run stopped after its marker.
    await ledger.forgetRefund(orgId, key);
    return false;
  }
  const credited = await ledger.refundOnce(orgId, key, micros);
  await marks.claim(key, String(micros));
  await ledger.forgetRefund(orgId, key);
  return credited;
}
