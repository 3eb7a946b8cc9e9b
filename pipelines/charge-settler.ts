// The charge settler: makes a charge final once what it paid for is on the stream, and refunds
// it when that never happened. A request charges and holds the charge open in one write of the
// balance (Balance.holds); the process that charged settles the hold right after its stream
// message is stored. This role covers the process dying in between (docs/acceptance.md):
//  - it reads every accepted batch and lookup, headers only, and settles the holds each names
//    (the charging process may have died after the publish but before its own settle);
//  - it refunds a hold the stream has moved well past (CHARGE_HOLD_REFUND_SECONDS after the
//    charge, by the time of the newest stream message it has handled) and cancels the states
//    of the hold's messages that a clientId retry could find, so the retry is not told a
//    message that was never queued is on its way.
// One per deployment (with the ingest writer and the pipeline metrics); a second one would only
// repeat writes that are no-ops the second time.
import type { JetStreamManager } from '@nats-io/jetstream';
import type { KvWatchEntry } from '@nats-io/kv';
import { CONSUMERS, decode, parseHoldRefs, HEADERS, STREAMS, SUBJECTS } from '../core/bus';
import type { ChargeHold } from '../core/accounts';
import { clientIdScope, type ClientIds, type LifecycleStates } from '../core/sms';
import { consumeBatches, ensureDurable } from '../infra/consumer';
import type { Logger } from '../infra/logger';
import { chargeHoldsRefunded, chargeHoldsSettled } from '../infra/metrics';
import type { Nats } from '../infra/nats';

/** Reason code of a message canceled with its refunded hold (spec 1 §2.6: 99, unknown error). */
export const CANCELED_CODE = 99;
const BATCH = 1000;
const HOLDS_MARK = Buffer.from('"holds"');

export interface ChargeSettler {
  /** One refund sweep now, of every balance or of `orgIds`; the holds refunded. */
  sweep(orgIds?: readonly string[]): Promise<number>;
  stop(): Promise<void>;
}

/** What the settler does to balances (stores/balance-ledger.ts BalanceLedger). */
export interface HoldLedger {
  /** Makes the named holds of `orgId` final (a hold already settled or refunded is skipped). */
  settleAll(orgId: string, holdIds: readonly string[]): Promise<void>;
  /** The hold as the balance holds it now (a fresh read), or null when it is settled or refunded. */
  openHold(orgId: string, holdId: string): Promise<ChargeHold | null>;
  /** Refunds the hold if it is still open and was taken before `heldBefore`: the hold taken, or null. */
  refundHold(orgId: string, holdId: string, heldBefore: number): Promise<ChargeHold | null>;
}

/** The ports the settler's decisions run over (roles/pipelines.ts hands in the KV adapters). */
export interface SettlerPorts {
  readonly ledger: HoldLedger;
  /** The messages' states (a refunded hold's still-queued messages are canceled). */
  readonly states: LifecycleStates;
  /** The clientId claims (a canceled message's claim is freed, so a retry is a new message). */
  readonly clientIds: ClientIds;
  readonly log: Logger;
}

export interface ChargeSettlerOptions extends SettlerPorts {
  readonly nats: Nats;
  readonly refundAfterMs: number;
  /** Between sweeps; a quarter of refundAfterMs, at most 10 s, by default. */
  readonly sweepEveryMs?: number;
  readonly log: Logger;
}

export async function startChargeSettler(options: ChargeSettlerOptions): Promise<ChargeSettler> {
  const { nats, ledger, refundAfterMs, log } = options;
  await ensureDurable(nats.jsm, {
    stream: STREAMS.sms.name, name: CONSUMERS.chargeSettler, filterSubjects: [SUBJECTS.smsAccepted, SUBJECTS.lookupCreated],
    maxAckPending: 20_000, ackWaitMs: 30_000, headersOnly: true,
  });
  const consumer = consumeBatches({
    js: nats.js, stream: STREAMS.sms.name, durable: CONSUMERS.chargeSettler, pull: BATCH, log, maxBatch: BATCH, maxWaitMs: 0,
    handle: async (msgs) => {
      const named = await settleNamed(ledger, msgs.map((msg) => msg.headers?.get(HEADERS.chargeHolds)));
      for (const msg of msgs) msg.ack();
      chargeHoldsSettled.inc(named);
    },
  });

  // The balances whose value holds charges, kept current by a watch (raw: decoded only when swept).
  const balances = new Map<string, Uint8Array>();
  const watcher = await nats.kv.balances.watch();
  const watching = (async () => {
    for await (const entry of watcher as AsyncIterable<KvWatchEntry>) {
      if (entry.operation === 'PUT' && Buffer.from(entry.value.buffer, entry.value.byteOffset, entry.value.length).includes(HOLDS_MARK)) balances.set(entry.key, entry.value);
      else balances.delete(entry.key);
    }
  })().catch((err: unknown) => log.warn({ err }, 'charge settler: balance watch ended'));

  const sweep = async (orgIds?: readonly string[]): Promise<number> => {
    const handledThrough = await streamTimeHandled(nats.jsm);
    if (handledThrough === null) return 0;
    return refundStale(options, [...balances], handledThrough - refundAfterMs, orgIds);
  };

  const sweepEveryMs = options.sweepEveryMs ?? Math.min(10_000, Math.max(250, Math.floor(refundAfterMs / 4)));
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = sweep().catch((err: unknown) => log.warn({ err }, 'charge settler: sweep failed; next one in a moment')).finally(schedule);
    }, sweepEveryMs);
    timer.unref();
  };
  schedule();
  log.info({ consumer: CONSUMERS.chargeSettler, refundAfterMs, sweepEveryMs }, 'charge settler running');
  return {
    sweep,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      watcher.stop();
      await consumer.stop();
      await Promise.allSettled([running, watching]);
    },
  };
}

/**
 * The stream time (ms) up to which the settler has handled every accepted batch and lookup:
 * now when nothing is pending, else the time of the last message below its ack floor. Null when
 * that cannot be told (nothing acknowledged yet, or that message is gone).
 */
async function streamTimeHandled(jsm: JetStreamManager): Promise<number | null> {
  const asked = Date.now();
  const info = await jsm.consumers.info(STREAMS.sms.name, CONSUMERS.chargeSettler);
  if (info.num_pending === 0 && info.num_ack_pending === 0) return asked;
  const seq = info.ack_floor.stream_seq;
  if (seq === 0) return null;
  try {
    return (await jsm.streams.getMessage(STREAMS.sms.name, { seq }))?.time.getTime() ?? null;
  } catch {
    return null;
  }
}

/**
 * Settles the holds named by a run of stream messages' `Sms-Charge-Holds` headers (one value per
 * message, undefined when it has none): one ledger write per organization; how many were named.
 */
export async function settleNamed(ledger: HoldLedger, headers: ReadonlyArray<string | undefined>): Promise<number> {
  const byOrg = new Map<string, string[]>();
  let named = 0;
  for (const header of headers) {
    for (const ref of parseHoldRefs(header)) {
      const ids = byOrg.get(ref.orgId) ?? [];
      ids.push(ref.holdId);
      byOrg.set(ref.orgId, ids);
      named += 1;
    }
  }
  await Promise.all([...byOrg].map(([orgId, ids]) => ledger.settleAll(orgId, ids)));
  return named;
}

/**
 * Refunds every hold taken before `heldBefore` in the given balances (organization id → the
 * balance's stored value; of `orgIds` only, when given) and cancels the messages each names;
 * the holds refunded. A hold the ledger no longer has open (settled meanwhile) is left alone.
 *
 * The messages are canceled before the hold is refunded: a clientId retry reads a message's
 * state, then its hold, and takes "queued, no hold open" for "on the stream" (core/sms/
 * acceptance.ts). Refunding first left a moment in which a stale hold was gone while its
 * messages were still queued, and a retry in that moment was answered 201 for messages that
 * were then canceled (npm run reliability, 2026-11-26). A hold still open this far behind the
 * handled stream cannot be settled any more, so canceling first is safe; a settler stopped in
 * between refunds the hold on its next sweep (its messages are canceled already).
 */
export async function refundStale(ports: SettlerPorts, balances: ReadonlyArray<readonly [string, Uint8Array]>, heldBefore: number, orgIds?: readonly string[]): Promise<number> {
  const { ledger, states, clientIds, log } = ports;
  let refunded = 0;
  const only = orgIds ? new Set(orgIds) : undefined;
  for (const [orgId, value] of balances) {
    if (only && !only.has(orgId)) continue;
    const holds = decode('balance', value).holds ?? {};
    for (const [holdId, hold] of Object.entries(holds)) {
      if (hold.at >= heldBefore) continue;
      const open = await ledger.openHold(orgId, holdId);
      if (!open || open.at >= heldBefore) continue;
      const canceled = await cancelStates(states, clientIds, open);
      const taken = await ledger.refundHold(orgId, holdId, heldBefore);
      if (!taken) {
        log.error({ orgId, holdId, canceled }, 'charge settler: a stale hold was settled while its messages were being canceled; reconcile these messages by hand');
        continue;
      }
      refunded += 1;
      chargeHoldsRefunded.inc();
      log.warn({ orgId, holdId, micros: taken.micros, heldAt: new Date(taken.at).toISOString(), canceled }, 'charge settler: refunded a charge whose messages never reached the stream (the process taking it stopped in between)');
    }
  }
  return refunded;
}

/**
 * Cancels the still-queued states of a refunded hold's messages and frees their clientIds (a
 * retry is then accepted as a new message); how many were canceled.
 */
export async function cancelStates(states: LifecycleStates, clientIds: ClientIds, hold: ChargeHold): Promise<number> {
  let canceled = 0;
  const at = new Date().toISOString();
  for (const id of hold.ids ?? []) {
    for (let attempt = 0; attempt < 5; attempt++) {
      const state = await states.read(id);
      // Scheduled ones too (DESIGN §4 Scheduling): their request died before the stream had them, so no timer holds them.
      if (!state || (state.message.status !== 'queued' && state.message.status !== 'scheduled')) break;
      const message = { ...state.message, status: 'canceled' as const, statusCode: CANCELED_CODE, charged: false, updatedAt: at };
      if ((await states.replace(message, state.revision)) !== null) {
        canceled += 1;
        if (message.clientId) await clientIds.release(clientIdScope(message.projectId, message.orgId), message.clientId, message.id);
        break;
      }
    }
  }
  return canceled;
}
