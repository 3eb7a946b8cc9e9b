// One workflow per batch of accepted messages (workflow id `smsb-<first message id>`), a state
// machine per message: the Temporal cost of a lifecycle (start, timer, signals, workflow tasks,
// markers) is shared by every message of the batch. It hands the batch to the carrier connector
// in one local activity, takes carrier events for many messages in one signal, records and
// delivers each batch of transitions in one local activity, runs one validity timer, and only a
// DLR whose first attempt fails gets its own retry schedule (per message, in order). Before its
// history grows large it continues as new with the messages still open. docs/lifecycle.md.
import { condition, continueAsNew, defineQuery, defineSignal, proxyLocalActivities, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import type { BatchLifecycleActivities, BatchSettleItem } from '../activities/lifecycle-batch';
import { QUERIES, SIGNALS } from '../core/bus/temporal';
import type { CarrierEvent } from '../core/carrier/types';
import type { MessageStatus } from '../core/sms/message';
import { advance, carry, deadlineOf, done, expire, finished, newTrack, restoreTrack, settleItem, type BatchMember, type CarriedTrack, type Change, type Track } from './batch-track';
import { deliverWithRetries } from './deliver';
import { LOCAL_WRITE, type WebhookSchedule } from './presets';

export const batchEventsSignal = defineSignal<[CarrierEvent[]]>(SIGNALS.batchEvents);

export interface BatchMessageStatus {
  readonly id: string;
  readonly status: MessageStatus;
  readonly code: number | null;
  readonly dlrs: number;
  readonly pendingDlrs: number;
}
export const batchStatusQuery = defineQuery<BatchMessageStatus[]>(QUERIES.batchStatus);

export interface BatchInput {
  readonly members: readonly BatchMember[];
  /** Validity period from the batch's start: no final report by then → expired (code 1). */
  readonly validityMs: number;
  readonly webhook: WebhookSchedule;
  /** Set by continue-as-new: the validity deadline (epoch ms) and the messages still open. */
  readonly carried?: { readonly validUntil: number; readonly tracks: readonly CarriedTrack[] };
  /** History length past which the batch continues as new (tests set a small one). */
  readonly historyLimit?: number;
}

export interface BatchOutcome {
  readonly messages: number;
  readonly statuses: Record<string, number>;
}

/** Continue as new past this many history events (the server suggests it at 4 Ki by default too). */
export const BATCH_HISTORY_LIMIT = 4_000;
/** Webhook deliveries in flight at once inside one settle (activities/lifecycle-batch.ts). */
const WEBHOOK_LANES = 100;

export async function smsBatchLifecycle(input: BatchInput): Promise<BatchOutcome> {
  const info = workflowInfo();
  const tracks = new Map<string, Track>();
  const inbox: CarrierEvent[] = [];
  setHandler(batchEventsSignal, (events) => { for (const e of events) inbox.push(e); });
  setHandler(batchStatusQuery, () => [...tracks.values()].map((t) => ({ id: t.member.id, status: t.current.status, code: t.current.code, dlrs: t.seq, pendingDlrs: t.pending.length })));

  if (input.carried) {
    for (const t of input.carried.tracks) tracks.set(t.member.id, restoreTrack(t));
  } else {
    const dispatch = proxyLocalActivities<BatchLifecycleActivities>({ ...LOCAL_WRITE, startToCloseTimeout: '60 seconds' });
    const owned = new Set(await dispatch.dispatchBatch({ workflowId: info.workflowId, runId: info.firstExecutionRunId }, input.members.map((m) => m.id)));
    for (const m of input.members) if (owned.has(m.id)) tracks.set(m.id, newTrack(m));
  }
  const validUntil = input.carried?.validUntil ?? Date.now() + input.validityMs;
  // One timer for the whole batch, never cancelled (a cancellation is one more history event).
  // Members with their own validity period (DESIGN §4 Scheduling) get one more timer per distinct
  // deadline, started after the batch's: a batch without them records exactly the commands it
  // did before (test/fixtures/histories replay). The batch's start is recovered from its deadline,
  // so a continued run keeps the members' deadlines without a new carried field.
  const batchStart = validUntil - input.validityMs;
  const deadline = (track: Track): number => deadlineOf(track.member, batchStart, validUntil);
  const fired = new Set<number>();
  let timedOut = false;
  void sleep(Math.max(1, validUntil - Date.now())).then(() => { fired.add(validUntil); timedOut = true; });
  for (const at of [...new Set([...tracks.values()].map(deadline))].filter((d) => d !== validUntil).sort((a, b) => a - b)) {
    void sleep(Math.max(1, at - Date.now())).then(() => { fired.add(at); timedOut = true; });
  }

  let deliveryError: unknown;
  const retryLoops: Array<Promise<void>> = [];
  const retry = (track: Track): void => {
    if (track.retrying || track.pending.length === 0) return;
    track.retrying = true;
    retryLoops.push((async () => {
      for (let next = track.pending[0]; next; next = track.pending[0]) {
        await deliverWithRetries(next.delivery, input.webhook, next.attempted);
        track.pending.shift();
      }
      track.retrying = false;
    })().catch((err: unknown) => { deliveryError ??= err; }));
  };
  for (const track of tracks.values()) retry(track);

  let settles = 0;
  const settle = async (batch: Array<{ track: Track; changes: Change[] }>): Promise<void> => {
    const eventAt = new Date().toISOString();
    const prepared = batch.map(({ track, changes }) => { const { item, deliveries } = settleItem(track, changes, eventAt); return { track, item, deliveries }; });
    const items: BatchSettleItem[] = prepared.map((p) => p.item);
    const perMessage = Math.max(1, ...items.map((i) => i.deliverNow.length));
    const rounds = Math.ceil(items.length / WEBHOOK_LANES);
    const activities = proxyLocalActivities<BatchLifecycleActivities>({ ...LOCAL_WRITE, startToCloseTimeout: 30_000 + rounds * perMessage * (input.webhook.attemptTimeoutMs + 1_000) });
    settles += 1;
    const result = await activities.settleBatch(`${info.workflowId}-${info.runId}-${settles}`, items);
    const unattempted = new Set(result.unattempted);
    prepared.forEach(({ track, item, deliveries }, i) => {
      const deliveredNow = result.delivered[i] ?? 0;
      // The first undelivered DLR of `deliverNow` was attempted unless its token was skipped.
      const failedFirst = deliveredNow < item.deliverNow.length && !unattempted.has(i);
      deliveries.slice(deliveredNow).forEach((delivery, k) => track.pending.push({ delivery, attempted: k === 0 && failedFirst }));
      retry(track);
    });
  };

  const open = (): number => { let n = 0; for (const t of tracks.values()) if (!finished(t)) n += 1; return n; };
  while (open() > 0) {
    await condition(() => inbox.length > 0 || timedOut);
    const batch: Array<{ track: Track; changes: Change[] }> = [];
    if (inbox.length > 0) {
      const byMessage = new Map<string, CarrierEvent[]>();
      for (const event of inbox.splice(0)) {
        const list = byMessage.get(event.messageId);
        if (list) list.push(event);
        else byMessage.set(event.messageId, [event]);
      }
      for (const [id, events] of byMessage) {
        const track = tracks.get(id);
        if (!track || finished(track)) continue;
        const changes = advance(track, events);
        if (changes.length > 0) batch.push({ track, changes });
      }
    } else {
      timedOut = false;
      for (const track of tracks.values()) {
        if (!fired.has(deadline(track))) continue;
        const changes = expire(track);
        if (changes.length > 0) batch.push({ track, changes });
      }
    }
    if (batch.length > 0) await settle(batch);
    if (open() > 0 && (workflowInfo().historyLength > (input.historyLimit ?? BATCH_HISTORY_LIMIT) || workflowInfo().continueAsNewSuggested)) {
      const still = [...tracks.values()].filter((t) => !done(t)).map(carry);
      await continueAsNew<typeof smsBatchLifecycle>({ ...input, members: [], carried: { validUntil, tracks: still } });
    }
  }
  await condition(() => deliveryError !== undefined || [...tracks.values()].every(done));
  await Promise.all(retryLoops);
  if (deliveryError !== undefined) throw deliveryError;
  const statuses: Record<string, number> = {};
  for (const t of tracks.values()) statuses[t.current.status] = (statuses[t.current.status] ?? 0) + 1;
  return { messages: tracks.size, statuses };
}
