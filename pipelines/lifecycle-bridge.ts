// Bridges from JetStream to Temporal, run next to the worker:
//  - starter:  `sms.accepted` → one smsBatchLifecycle workflow per batch of the messages fetched
//              together (at most `batchMax` each; id `smsb-<first message id>-<fingerprint of its ids>`), or, with
//              `batchMax` 1, one smsLifecycle workflow per message (id `sms-<id>`). A repeated start
//              is harmless (same id: the existing workflow; another grouping after a crash: the
//              batch claims each message before its hand-off, so a message already held by
//              another batch is left out). The stream message is acknowledged only once every
//              workflow it feeds exists, so no accepted message is left without one;
//  - events:   `carrier.events` → signals, in stream order per message: the events of all the
//              messages of one batch in one `batchEvents` signal (the batch is found through
//              its claim, KV_KEYS.lifecycleOwner), `carrierEvent` for a per-message lifecycle;
//  - inbound:  `carrier.inbound` → opt-out on a STOP-family keyword, opt back in on a START-family
//              one (core/sms/opt-out.ts), and an inbound/stop DLR to the webhook of the token that
//              owns the number (spec 1 §6).
import { createHash } from 'node:crypto';
import type { JsMsg } from '@nats-io/jetstream';
import { WorkflowIdConflictPolicy, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { batchMemo, CONSUMERS, decode, decodeCarrierEvents, SIGNALS, STREAMS, SUBJECTS, WORKFLOW_IDS, WORKFLOW_TYPES, type InboundRecord } from '../core/bus';
import type { CarrierEvent, CarrierInbound } from '../core/carrier';
import { firstWord, inboundMessageId, keywordAction, type DlrDelivery, type HelpReplies, type HelpReply, type KeywordAction, type LifecycleOwners, type NumberDirectory, type OptOutRecorder, type SmsMessage } from '../core/sms';
import type { Token } from '../core/accounts';
import { isAppError } from '../core/errors';
import { PipelinedBus } from '../infra/bus/event-bus';
import type { Logger } from '../infra/logger';
import { consumeBatches, ensureDurable, type RunningConsumer } from '../infra/consumer';
import type { Nats } from '../infra/nats';
import type { WebhookSchedule } from '../workflows/presets';
import type { smsLifecycle, smsScheduled } from '../workflows/sms-lifecycle';
import type { dlrDelivery } from '../workflows/dlr-delivery';
import type { BatchMember } from '../workflows/batch-track';
import type { BatchInput, smsBatchLifecycle } from '../workflows/sms-batch-lifecycle';
import type { LifecycleInput } from '../workflows/types';

export interface BridgeDeps {
  readonly nats: Nats;
  readonly client: Client;
  /** True when `client` is on the connection of a worker polling `taskQueue` in this process. */
  readonly eagerStart: boolean;
  readonly taskQueue: string;
  readonly directory: NumberDirectory;
  readonly optOuts: OptOutRecorder;
  /** Sends the replies to HELP-family keywords; without it, HELP is a plain inbound only. */
  readonly helpReplies?: HelpReplies;
  readonly validityMs: number;
  readonly webhook: WebhookSchedule;
  /** Most messages in one batch lifecycle; 1: one lifecycle workflow per message (the former design). */
  readonly batchMax: number;
  /** Which batch holds each message (the claims the batches make). */
  readonly owners: LifecycleOwners;
  readonly log: Logger;
}

/**
 * The batch's id names its exact messages: with the first message's id alone, a start repeated
 * with more messages (a crash before the ack, a different fetch) would find the earlier batch
 * and its extra messages would have no lifecycle.
 */
function fingerprint(ids: readonly string[]): string {
  return createHash('sha256').update(ids.join(' ')).digest('hex').slice(0, 16);
}

/** Workflow task timeout of the per-message and scheduled lifecycle workflows (the server's default is 10 s). */
const LIFECYCLE_WORKFLOW_TASK_TIMEOUT = '60 seconds';
/**
 * Workflow task timeout of a batch lifecycle: the server's default. Under load a Temporal
 * server can record a workflow task as started and never deliver it to the worker (its History
 * answers Matching after Matching's 1 s deadline: temporalio/temporal#11733), and the batch waits
 * for this timeout to get it again: 10 s bounds that wait (docs/decisions.md, 2026-11-27). The
 * embedded dev server is built with that deadline at 10 s (scripts/temporal-patch.mjs); a
 * deployment's own Temporal server may not be. A settle that runs longer keeps its task through
 * the worker's heartbeat at 80 % of it, as with 60 s.
 */
const BATCH_WORKFLOW_TASK_TIMEOUT = '10 seconds';

/** The workflow task timeout a lifecycle start asks for. */
export function workflowTaskTimeoutOf(kind: LifecycleStart['kind']): string {
  return kind === 'batch' ? BATCH_WORKFLOW_TASK_TIMEOUT : LIFECYCLE_WORKFLOW_TASK_TIMEOUT;
}
/** Carrier events gather this long before they are handled (more events per signal, fewer history events). */
const EVENTS_GATHER_MS = 50;
/**
 * A batch lifecycle's signals are spaced by 250 ms after its first, doubling with each signal up
 * to 2 s: a batch that settles quickly sees its events at once, one whose messages report over a
 * long time (carrier latency, load) gets few, large signals.
 */
const SIGNAL_SPACING_MS = { first: 250, max: 2_000 } as const;
/** Outboxes of workflows not signalled lately are forgotten past this many. */
const OUTBOXES_KEPT = 5_000;

/** A bridge consumer: batches of whatever arrived while the previous one was handled (no batching delay when quiet). */
async function bridge(nats: Nats, log: Logger, stream: string, name: string, subject: string, maxAckPending: number, batchSize: number, handle: (msgs: JsMsg[]) => Promise<void>, gatherMs = 0, pinned = false): Promise<RunningConsumer> {
  await ensureDurable(nats.jsm, { stream, name, filterSubjects: [subject], maxAckPending, ackWaitMs: 60_000, pinned });
  return consumeBatches({ js: nats.js, stream, durable: name, pull: batchSize, log, maxBatch: batchSize, maxWaitMs: gatherMs, handle, pinned });
}

/** One lifecycle workflow the starter starts: a message's own, or a batch's. */
export type LifecycleStart =
  | { readonly kind: 'message'; readonly workflowId: string; readonly input: LifecycleInput & { webhook: WebhookSchedule } }
  | { readonly kind: 'scheduled'; readonly workflowId: string; readonly input: LifecycleInput & { webhook: WebhookSchedule; scheduledAt: string } }
  | { readonly kind: 'batch'; readonly workflowId: string; readonly input: BatchInput; readonly memo: Record<string, string | number> };

/**
 * The lifecycle workflows of a run of accepted messages, in stream order: with `batchMax` 1 one
 * per message (`sms-<id>`), else batches of at most `batchMax` messages named by their first
 * message and a fingerprint of all their ids. Legacy messages get no webhooks.
 */
export function lifecycleStarts(accepted: readonly SmsMessage[], options: Pick<BridgeDeps, 'batchMax' | 'validityMs' | 'webhook'>): LifecycleStart[] {
  const { batchMax, validityMs, webhook } = options;
  const input = (m: SmsMessage): LifecycleInput & { webhook: WebhookSchedule } => ({
    messageId: m.id, orgId: m.orgId, tokenId: m.tokenId, clientId: m.clientId, segments: m.messagesCount,
    chargedMicros: m.priceUserMicros, validityMs: m.validityPeriod === undefined ? validityMs : m.validityPeriod * 1000, webhooks: m.source !== 'legacy', webhook,
  });
  // A scheduled message (DESIGN §4 Scheduling) waits on a timer of its own, in its own
  // smsScheduled workflow `sms-<id>` (its carrier events find it there, as a message without a
  // batch claim); the others are batched exactly as before.
  const isScheduled = (m: SmsMessage): m is SmsMessage & { scheduledAt: string } => m.status === 'scheduled' && !!m.scheduledAt;
  const scheduled = accepted.filter(isScheduled).map((m): LifecycleStart => ({
    kind: 'scheduled', workflowId: WORKFLOW_IDS.lifecycle(m.id), input: { ...input(m), scheduledAt: m.scheduledAt },
  }));
  const messages = scheduled.length === 0 ? accepted : accepted.filter((m) => !isScheduled(m));
  if (batchMax <= 1) {
    return [...scheduled, ...messages.map((m): LifecycleStart => ({ kind: 'message', workflowId: WORKFLOW_IDS.lifecycle(m.id), input: input(m) }))];
  }
  const starts: LifecycleStart[] = scheduled;
  for (let i = 0; i < messages.length; i += batchMax) {
    const members: BatchMember[] = messages.slice(i, i + batchMax).map((m) => ({
      id: m.id, orgId: m.orgId, tokenId: m.tokenId, clientId: m.clientId, segments: m.messagesCount, chargedMicros: m.priceUserMicros, webhooks: m.source !== 'legacy',
      // Only when the message has its own (DESIGN §4 Scheduling): inputs without it stay as they were.
      ...(m.validityPeriod === undefined ? {} : { validityMs: m.validityPeriod * 1000 }),
    }));
    const ids = members.map((m) => m.id);
    starts.push({ kind: 'batch', workflowId: WORKFLOW_IDS.batch(ids[0] ?? '', fingerprint(ids)), input: { members, validityMs, webhook }, memo: batchMemo(ids) });
  }
  return starts;
}

/**
 * Each message's carrier events (in stream order) go to the workflow that holds the message:
 * the batch that claimed it (KV_KEYS.lifecycleOwner), else its own `sms-<id>`. A message whose
 * owner cannot be looked up is `unresolved` (its events are delivered again).
 */
export async function routeEvents<T>(byMessage: ReadonlyMap<string, readonly T[]>, owners: Pick<LifecycleOwners, 'find'>): Promise<{
  byWorkflow: Map<string, { batch: boolean; entries: T[] }>;
  unresolved: Array<{ messageId: string; entries: readonly T[]; err: unknown }>;
}> {
  const byWorkflow = new Map<string, { batch: boolean; entries: T[] }>();
  const unresolved: Array<{ messageId: string; entries: readonly T[]; err: unknown }> = [];
  await Promise.all([...byMessage.entries()].map(async ([messageId, entries]) => {
    let owner: Awaited<ReturnType<LifecycleOwners['find']>>;
    try {
      owner = await owners.find(messageId);
    } catch (err) {
      unresolved.push({ messageId, entries, err });
      return;
    }
    const workflowId = owner ? owner.workflowId : WORKFLOW_IDS.lifecycle(messageId);
    const group = byWorkflow.get(workflowId) ?? { batch: owner !== null, entries: [] };
    byWorkflow.set(workflowId, group);
    group.entries.push(...entries);
  }));
  return { byWorkflow, unresolved };
}

export interface InboundRoute {
  readonly record: InboundRecord;
  readonly delivery: DlrDelivery;
  /** What the message's first word asks for (core/sms/opt-out.ts); null for an ordinary message. */
  readonly keyword: KeywordAction | null;
  /** The project a STOP-family keyword opts the sender out of. */
  readonly optOutProject: string | undefined;
  /** The project a START-family keyword opts the sender back into. */
  readonly optInProject: string | undefined;
  /** A HELP-family keyword to a token with a help text: the reply to send, from our number to the handset. */
  readonly helpReply: HelpReply | undefined;
  /** The token that owns the number. */
  readonly token: Token;
}

/**
 * Where an inbound message goes (spec 1 §6): to the token that owns the number it was sent to
 * (none, or a revoked one: dropped, null), as an inbound record for its SMPP receivers and a DLR
 * for its webhook; a STOP-family keyword also opts the sender out of the token's project (DLR
 * status `stop`), a START-family one opts it back in (a plain `inbound` DLR). A HELP-family
 * keyword is a plain inbound that also gets the token's help text as a reply, when it has one.
 */
export function routeInbound(mo: CarrierInbound, directory: NumberDirectory, messageId: () => string = () => inboundMessageId(mo.inboundId, mo.at)): InboundRoute | null {
  const token = directory.tokenByNumber(mo.to);
  if (!token || token.revokedAt) return null;
  const keyword = keywordAction(mo.text);
  const status = keyword === 'stop' ? 'stop' : 'inbound';
  const id = messageId();
  const project = token.projectId ?? undefined;
  return {
    // Its owner, so the history writer stores it (direction inbound, core/sms/inbound.ts).
    record: {
      id, tokenId: token.id, from: mo.from, to: mo.to, text: mo.text, status, at: mo.at,
      orgId: token.orgId, projectId: token.projectId ?? '', currency: directory.org(token.orgId)?.currency ?? '',
    },
    // Who sent it and to which of our numbers: a reply is a POST /sms from `to` to `from`.
    delivery: { tokenId: token.id, messageId: id, seq: 1, payload: { id, status, code: 0, eventAt: mo.at, message: mo.text, from: mo.from, to: mo.to } },
    keyword,
    optOutProject: keyword === 'stop' ? project : undefined,
    optInProject: keyword === 'start' ? project : undefined,
    helpReply: keyword === 'help' && project && token.helpText ? { from: mo.to, to: mo.from, text: token.helpText } : undefined,
    token,
  };
}

/** What settling a stream message needs (a JsMsg). */
export interface Settleable {
  ack(): void;
  nak(millis?: number): void;
}

/**
 * One stream message whose events go out in several parts (a carrier.events batch holds events
 * of many messages, signalled to many workflows): acknowledged once every part is done, negatively
 * acknowledged at the first part that failed (the whole message comes again; a workflow ignores
 * an event it has applied).
 */
export class PartedMessage {
  private left: number;
  private failed = false;

  constructor(private readonly msg: Settleable, parts: number) {
    this.left = parts;
    if (parts === 0) msg.ack();
  }

  done(): void {
    this.left -= 1;
    if (this.left === 0 && !this.failed) this.msg.ack();
  }

  fail(delayMs: number): void {
    if (this.failed) return;
    this.failed = true;
    this.msg.nak(delayMs);
  }
}

export async function startLifecycleBridge(deps: BridgeDeps): Promise<RunningConsumer> {
  const { nats, client, log } = deps;

  // Every lifecycle's workflow task runs local activities on a CPU shared with every role: a
  // starved one must not time out. After such a timeout, with its local activities still running,
  // a per-message workflow was seen (2026-11-26, reliability at load 30) to continue without the
  // carrier signal that arrived meanwhile, though a replay of the same history applies it. A batch
  // lifecycle has the server's 10 s instead (workflowTaskTimeoutOf): it bounds the wait of a task
  // the server started but never delivered.
  const common = {
    taskQueue: deps.taskQueue,
    workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING, requestEagerStart: deps.eagerStart,
  };
  const start = (s: LifecycleStart): Promise<unknown> => {
    const options = { ...common, workflowTaskTimeout: workflowTaskTimeoutOf(s.kind), workflowId: s.workflowId };
    return s.kind === 'message'
      ? client.workflow.start<typeof smsLifecycle>(WORKFLOW_TYPES.smsLifecycle, { ...options, args: [s.input] })
      : s.kind === 'scheduled'
        ? client.workflow.start<typeof smsScheduled>(WORKFLOW_TYPES.smsScheduled, { ...options, args: [s.input] })
        : client.workflow.start<typeof smsBatchLifecycle>(WORKFLOW_TYPES.smsBatchLifecycle, { ...options, args: [s.input], memo: s.memo });
  };

  const starter = await bridge(nats, log, STREAMS.sms.name, CONSUMERS.lifecycleStarter, SUBJECTS.smsAccepted, 400, 50, async (msgs) => {
    const readable: Array<{ msg: JsMsg; messages: readonly SmsMessage[] }> = [];
    for (const msg of msgs) {
      try {
        readable.push({ msg, messages: decode('accepted', msg.data).messages });
      } catch (err) {
        log.error({ err, seq: msg.seq }, 'starter: unreadable accepted message; will retry');
        msg.nak(1000);
      }
    }
    try {
      await Promise.all(lifecycleStarts(readable.flatMap((r) => r.messages), deps).map(start));
      for (const r of readable) r.msg.ack();
    } catch (err) {
      log.error({ err, streamMessages: readable.length }, 'starter: could not start lifecycle workflows; will retry');
      for (const r of readable) r.msg.nak(1000);
    }
  });

  // Carrier events wait in an outbox per workflow: a batch's first events go at once, later ones
  // after a spacing that grows with each signal (SIGNAL_SPACING_MS), so a batch whose messages
  // report over a long time gets few, large signals; each signal costs 5 history events whatever it carries. One
  // send at a time per workflow keeps each message's events in stream order. Events held here
  // are not acknowledged yet: after a crash they are delivered again.
  interface Outbox { readonly batch: boolean; entries: Array<{ from: PartedMessage; event: CarrierEvent }>; timer: NodeJS.Timeout | undefined; sending: Promise<void>; lastAt: number; signals: number }
  const outboxes = new Map<string, Outbox>();
  const send = async (workflowId: string, box: Outbox): Promise<void> => {
    const entries = box.entries.splice(0);
    if (entries.length === 0) return;
    box.lastAt = Date.now();
    box.signals += 1;
    const events = entries.map((e) => e.event);
    try {
      const handle = client.workflow.getHandle(workflowId);
      // By name (core/bus SIGNALS): the workflows define them with these names.
      await handle.signal(box.batch ? SIGNALS.batchEvents : SIGNALS.carrierEvent, events);
      for (const e of entries) e.from.done();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        log.warn({ workflowId }, 'carrier events for a lifecycle no longer running (finished or unknown); dropped');
        for (const e of entries) e.from.done();
      } else {
        log.warn({ err, workflowId }, 'signal failed; will retry');
        for (const e of entries) e.from.fail(1000);
      }
    }
  };
  const schedule = (workflowId: string, box: Outbox): void => {
    if (box.timer || box.entries.length === 0) return;
    const spacing = box.signals === 0 ? 0 : Math.min(SIGNAL_SPACING_MS.max, SIGNAL_SPACING_MS.first * 2 ** (box.signals - 1));
    const wait = box.batch ? Math.max(0, box.lastAt + spacing - Date.now()) : 0;
    box.timer = setTimeout(() => {
      box.sending = box.sending.then(() => send(workflowId, box)).finally(() => {
        box.timer = undefined;
        schedule(workflowId, box);
      });
    }, wait);
  };
  const sweep = (): void => {
    if (outboxes.size < OUTBOXES_KEPT) return;
    const old = Date.now() - 10 * SIGNAL_SPACING_MS.max;
    for (const [id, box] of outboxes) if (!box.timer && box.entries.length === 0 && box.lastAt < old) outboxes.delete(id);
  };

  const events = await bridge(nats, log, STREAMS.carrier.name, CONSUMERS.lifecycleEvents, SUBJECTS.carrierEvents, 10_000, 2000, async (msgs) => {
    // The events of one message go as one signal, in stream order; messages go in parallel. A
    // stream message (a batch of the connector's events) is acknowledged once all its events are signalled.
    const byMessage = new Map<string, Array<{ from: PartedMessage; event: CarrierEvent }>>();
    for (const msg of msgs) {
      let events: readonly CarrierEvent[];
      try {
        events = decodeCarrierEvents(msg.data);
      } catch (err) {
        log.error({ err, seq: msg.seq }, 'unreadable carrier event; dropped');
        msg.ack();
        continue;
      }
      const from = new PartedMessage(msg, events.length);
      for (const event of events) {
        const list = byMessage.get(event.messageId);
        if (list) list.push({ from, event });
        else byMessage.set(event.messageId, [{ from, event }]);
      }
    }
    const { byWorkflow, unresolved } = await routeEvents(byMessage, deps.owners);
    for (const { messageId, entries, err } of unresolved) {
      log.warn({ err, messageId }, 'could not look up the lifecycle of a message; will retry');
      for (const e of entries) e.from.fail(1000);
    }
    for (const [workflowId, { batch, entries }] of byWorkflow) {
      const box = outboxes.get(workflowId) ?? { batch, entries: [], timer: undefined, sending: Promise.resolve(), lastAt: 0, signals: 0 };
      outboxes.set(workflowId, box);
      box.entries.push(...entries);
      schedule(workflowId, box);
    }
    sweep();
  // Pinned: with several workers, a message's events fetched by two processes could be signalled
  // out of order (a DELIVRD before its ENROUTE ends the lifecycle and the buffered DLR is lost).
  }, deps.batchMax > 1 ? EVENTS_GATHER_MS : 0, true);

  // sms.inbound goes out through the bus's home (infra/bus/), over the pipelined client.
  const bus = new PipelinedBus(nats.pipeline);
  const inbound = await bridge(nats, log, STREAMS.carrier.name, CONSUMERS.lifecycleInbound, SUBJECTS.carrierInbound, 500, 50, async (msgs) => {
    for (const msg of msgs) {
      try {
        const mo = decode('carrierInbound', msg.data);
        const route = routeInbound(mo, deps.directory);
        if (!route) {
          log.warn({ to: mo.to }, 'inbound message for a number no token owns; dropped');
          msg.ack();
          continue;
        }
        if (route.optOutProject) await deps.optOuts.optOut(route.optOutProject, mo.from, mo.at, 'keyword', firstWord(mo.text));
        if (route.optInProject) await deps.optOuts.optIn(route.optInProject, mo.from);
        if (route.helpReply && deps.helpReplies) {
          try {
            await deps.helpReplies.send(route.token, route.helpReply, mo.inboundId);
          } catch (err) {
            // Refused as any send would be (funds, an opted-out handset, a price): not retried.
            if (!isAppError(err)) throw err;
            log.warn({ err, tokenId: route.token.id, to: mo.from }, 'inbound: the HELP reply was refused; not sent');
          }
        }
        // The token's SMPP receiver sessions get it as deliver_sm (gateways/smpp, docs/smpp.md).
        await bus.publish(SUBJECTS.smsInbound(route.record.tokenId), { inbound: [route.record] }, `inbound-${mo.inboundId}`);
        await client.workflow.start<typeof dlrDelivery>(WORKFLOW_TYPES.dlrDelivery, {
          taskQueue: deps.taskQueue,
          workflowId: WORKFLOW_IDS.inbound(mo.inboundId),
          args: [route.delivery, deps.webhook],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        });
        msg.ack();
      } catch (err) {
        log.error({ err }, 'inbound: could not route; will retry');
        msg.nak(1000);
      }
    }
  });

  log.info('lifecycle bridge running');
  return {
    stop: async () => {
      await Promise.all([starter.stop(), events.stop(), inbound.stop()]);
      for (const box of outboxes.values()) clearTimeout(box.timer);
    },
  };
}
