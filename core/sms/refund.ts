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

/** Credits `micros` to `orgId` once for `key`: true when this call credited them. */
export async function refundOnce(ledger: RefundLedger, marks: OnceKeys, orgId: string, key: string, micros: number): Promise<boolean> {
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
