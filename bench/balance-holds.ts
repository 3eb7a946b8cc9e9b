// What one coalesced write of an organization's balance costs the ledger with N open charge holds
// (docs/acceptance.md, "holds in a Map"): each batch settles three holds and takes three new ones, then
// serializes the value to write. Two ways, side by side in this process:
//   map        stores/held-balance.ts as the ledger runs it (holds in a Map, each hold's JSON kept);
//   plain      the ledger before f9921f8: a plain object of holds copied, changed and
//              serialized whole (dictionary-mode after its first delete).
// Medians of RUNS runs, printed and written to bench/results/balance-holds.json.
// Usage: node --import tsx bench/balance-holds.ts [--runs 5 --batches 20000 --out balance-holds.json]
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import type { Balance, ChargeHold } from '../core/accounts';
import { HeldBalance, type BalanceOp } from '../stores/held-balance';
import { benchArgs } from './cli-args';
import { writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    runs: { type: 'string', default: '5' },
    batches: { type: 'string', default: '20000' },
    out: { type: 'string', default: 'balance-holds.json' },
  },
});
const BATCHES = Number(values.batches);
const HOLD_COUNTS = [30, 60, 120];

const hold = (): ChargeHold => ({ micros: 75_000, at: Date.now() });

/** The ops of one batch: the three oldest holds settled, three new charges held. */
function batchOps(open: string[]): BalanceOp[] {
  const ops: BalanceOp[] = [];
  for (let k = 0; k < 3; k++) {
    ops.push({ kind: 'settle', holdId: open.shift() as string });
    const id = randomUUID();
    open.push(id);
    ops.push({ kind: 'charge', micros: 75_000, hold: { id, held: hold() } });
  }
  return ops;
}

/** A balance with `holds` open holds, and their ids oldest first. */
function startingBalance(holds: number): { open: string[]; balance: Balance } {
  const open: string[] = [];
  const held: Record<string, ChargeHold> = {};
  for (let i = 0; i < holds; i++) {
    const id = randomUUID();
    open.push(id);
    held[id] = hold();
  }
  return { open, balance: { currency: 'EUR', availableMicros: 1e15, holds: held } };
}

function timeMap(holds: number): number {
  const { open, balance: start } = startingBalance(holds);
  let balance = HeldBalance.from(start);
  const ops = Array.from({ length: BATCHES }, () => batchOps(open));
  const started = process.hrtime.bigint();
  let bytes = 0;
  for (const batch of ops) {
    balance = balance.apply(batch).next;
    bytes += balance.text().length;
  }
  if (bytes === 0) throw new Error('nothing serialized');
  return Number(process.hrtime.bigint() - started) / 1e3 / BATCHES;
}

function timePlain(holds: number): number {
  const { open, balance: start } = startingBalance(holds);
  let balance: Balance = start;
  const ops = Array.from({ length: BATCHES }, () => batchOps(open));
  const started = process.hrtime.bigint();
  let bytes = 0;
  for (const batch of ops) {
    let available = balance.availableMicros;
    const copy: Record<string, ChargeHold> = { ...balance.holds };
    for (const op of batch) {
      if (op.kind === 'settle') delete copy[op.holdId];
      else if (op.kind === 'charge' && op.hold) {
        available -= op.micros;
        copy[op.hold.id] = op.hold.held;
      }
    }
    balance = { currency: balance.currency, availableMicros: available, ...(Object.keys(copy).length > 0 ? { holds: copy } : {}) };
    bytes += JSON.stringify(balance).length;
  }
  if (bytes === 0) throw new Error('nothing serialized');
  return Number(process.hrtime.bigint() - started) / 1e3 / BATCHES;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const rows = HOLD_COUNTS.map((holds) => {
  const map: number[] = [];
  const plain: number[] = [];
  for (let run = 0; run < Number(values.runs); run++) {
    plain.push(timePlain(holds));
    map.push(timeMap(holds));
  }
  return { openHolds: holds, mapUsPerBatch: Number(median(map).toFixed(1)), plainUsPerBatch: Number(median(plain).toFixed(1)), ratio: Number((median(plain) / median(map)).toFixed(1)) };
});
const written = writeResult(values.out, {
  at: new Date().toISOString(), machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  conditions: `${BATCHES} batches per run (3 settles + 3 held charges each), ${values.runs} runs, medians; one process`, rows,
});
for (const r of rows) process.stdout.write(`${String(r.openHolds).padStart(4)} open holds: map ${r.mapUsPerBatch} µs per batch, plain object ${r.plainUsPerBatch} µs (×${r.ratio})\n`);
process.stdout.write(`written to ${written}\n`);
