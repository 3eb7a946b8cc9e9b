// Admin CLI commands about one message (issue 13, operations): `message story` (its state,
// transitions, every DLR attempt, carrier ids and the workflow that holds it, with a Temporal UI
// link) and `message history` (that workflow's history as JSON, e.g. a replay fixture).
// Registered on the admin program by cli/admin.ts.
import { writeFileSync } from 'node:fs';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { Command } from 'commander';
import type { temporal as proto } from '@temporalio/proto';
import { BATCH_MEMO_COUNT, BATCH_MEMO_MESSAGES, decode, KV_KEYS, STREAMS, SUBJECTS, temporalUiLink, WORKFLOW_IDS } from '../core/bus';
import type { CarrierEvent } from '../core/carrier';
import type { DlrAttempt, SmsMessage } from '../core/sms';
import type { Nats } from '../infra/nats';
import { connectTemporal } from '../infra/temporal';
import { KvLifecycleOwners, KvLifecycleStates } from '../stores/lifecycle-records';

export interface MessageCommandContext {
  readonly nats: Nats;
}

type Action = <A extends unknown[]>(fn: (ctx: MessageCommandContext, ...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Print = (human: string, data: unknown) => void;

export interface TemporalSettings {
  readonly address: string;
  readonly namespace: string;
  /** Base URL of the Temporal UI (the embedded dev server's; `--ui` overrides it). */
  readonly ui: string;
}

/** Stream messages read at most when looking for a message's records (`--scan`). */
const DEFAULT_SCAN = 200_000;

export interface Holder {
  readonly workflowId: string;
  readonly firstRunId: string | null;
}

export async function holderOf(nats: Nats, messageId: string): Promise<Holder> {
  const owner = await new KvLifecycleOwners(nats.kv.idempotency).find(messageId);
  return owner ? { workflowId: owner.workflowId, firstRunId: owner.runId } : { workflowId: WORKFLOW_IDS.lifecycle(messageId), firstRunId: null };
}

/** Every run of the workflow from the first, following continue-as-new. */
export async function runHistories(client: Client, holder: Holder): Promise<Array<{ runId: string; history: proto.api.history.v1.IHistory }>> {
  const runs: Array<{ runId: string; history: proto.api.history.v1.IHistory }> = [];
  let runId = holder.firstRunId ?? (await client.workflow.getHandle(holder.workflowId).describe()).runId;
  for (let i = 0; runId && i < 100; i++) {
    const history = await client.workflow.getHandle(holder.workflowId, runId).fetchHistory();
    runs.push({ runId, history });
    const next = history.events?.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    runId = next ?? '';
  }
  return runs;
}

/** The carrier events of one message among the signals of a history. */
function carrierEventsIn(history: proto.api.history.v1.IHistory, messageId: string): CarrierEvent[] {
  const found: CarrierEvent[] = [];
  for (const event of history.events ?? []) {
    const payloads = event.workflowExecutionSignaledEventAttributes?.input?.payloads ?? [];
    for (const payload of payloads) {
      const value = defaultPayloadConverter.fromPayload<CarrierEvent | CarrierEvent[]>(payload);
      for (const e of Array.isArray(value) ? value : [value]) if (e.messageId === messageId) found.push(e);
    }
  }
  return found;
}

interface Records {
  readonly transitions: Array<{ seq: number; status: string; code: number; eventAt: string }>;
  readonly attempts: DlrAttempt[];
  readonly scanned: number;
}

/** The message's transitions and webhook attempts, read from the SMS stream from its creation on. */
async function recordsOf(nats: Nats, message: SmsMessage, limit: number): Promise<Records> {
  const consumer = await nats.js.consumers.get(STREAMS.sms.name, {
    filter_subjects: [SUBJECTS.smsStatus(message.tokenId), SUBJECTS.dlrAttempt],
    deliver_policy: DeliverPolicy.StartTime,
    opt_start_time: message.createdAt,
  });
  const transitions = new Map<number, Records['transitions'][number]>();
  const attempts = new Map<string, DlrAttempt>();
  let scanned = 0;
  let pending = (await consumer.info()).num_pending;
  while (pending > 0 && scanned < limit) {
    const batch = await consumer.fetch({ max_messages: 1000, expires: 2000 });
    let got = 0;
    for await (const msg of batch) {
      got += 1;
      scanned += 1;
      pending = msg.info.pending;
      if (msg.subject === SUBJECTS.dlrAttempt) {
        for (const a of decode('dlrAttempt', msg.data).attempts) if (a.messageId === message.id) attempts.set(`${a.seq}.${a.attempt}.${a.at}`, a);
      } else {
        for (const t of decode('status', msg.data).transitions ?? []) if (t.messageId === message.id) transitions.set(t.seq, { seq: t.seq, status: t.status, code: t.code, eventAt: t.eventAt });
      }
    }
    if (got === 0) break;
  }
  const byOrder = (a: DlrAttempt, b: DlrAttempt): number => a.seq - b.seq || a.attempt - b.attempt || a.at.localeCompare(b.at);
  return { transitions: [...transitions.values()].sort((a, b) => a.seq - b.seq), attempts: [...attempts.values()].sort(byOrder), scanned };
}

function describeEvent(e: CarrierEvent): string {
  switch (e.kind) {
    case 'submitted': return `segment ${e.segment + 1}/${e.segments} submitted to ${e.carrier}, carrier id ${e.carrierMessageId} (${e.at})`;
    case 'submit_failed': return `segment ${e.segment + 1}/${e.segments} refused by ${e.carrier}: ${e.reason}${e.commandStatus === null ? '' : ` (command status ${e.commandStatus})`} (${e.at})`;
    case 'receipt': return `segment ${e.segment + 1}/${e.segments} receipt ${e.state} err ${e.err} from ${e.carrier}, carrier id ${e.carrierMessageId} (${e.at})`;
  }
}

export function registerMessageCommands(program: Command, action: Action, print: Print, temporal: TemporalSettings): void {
  const message = program.commands.find((c) => c.name() === 'message') ?? program.command('message').description('messages');

  message.command('story').description('a message\'s state, transitions, every DLR attempt, carrier ids and the workflow that holds it')
    .requiredOption('--id <message id>').option('--scan <n>', 'stream messages to read at most for its records', String(DEFAULT_SCAN))
    .option('--ui <url>', 'base URL of the Temporal UI (default: the stack\'s)')
    .action(action(async (ctx, o: { id: string; scan: string; ui?: string }) => {
      const state = (await new KvLifecycleStates(ctx.nats.kv.messages).read(o.id))?.message;
      if (!state) throw new Error(`message ${o.id} has no state in NATS KV (unknown, or older than MESSAGE_STATE_TTL_HOURS)`);
      const holder = await holderOf(ctx.nats, o.id);
      const t = await connectTemporal({ address: temporal.address, namespace: temporal.namespace });
      try {
        const description = await t.client.workflow.getHandle(holder.workflowId).describe();
        const runs = await runHistories(t.client, holder);
        const carrier = runs.flatMap((r) => carrierEventsIn(r.history, o.id));
        const records = await recordsOf(ctx.nats, state, Number(o.scan));
        const dead = [];
        for (const t2 of records.transitions) {
          const d = await ctx.nats.kv.deadDlrs.get(KV_KEYS.deadDlr(state.tokenId, o.id, t2.seq));
          if (d && d.operation === 'PUT' && d.length > 0) dead.push(decode('deadDlr', d.value));
        }
        // Batches started before the memo had a count list every id.
        const counted = Number(description.memo?.[BATCH_MEMO_COUNT] ?? 0);
        const members = counted || String(description.memo?.[BATCH_MEMO_MESSAGES] ?? '').split(' ').filter(Boolean).length;
        const workflow = {
          id: holder.workflowId, runId: description.runId, firstRunId: holder.firstRunId ?? runs[0]?.runId ?? null, runs: runs.map((r) => r.runId), type: description.type,
          status: description.status.name, historyLength: description.historyLength, messagesInBatch: members || null,
          ui: temporalUiLink(o.ui ?? temporal.ui, temporal.namespace, holder.workflowId, description.runId),
        };
        const lines = [
          `message ${state.id}: ${state.status}${state.statusCode === null ? '' : ` (code ${state.statusCode})`}, ${state.messagesCount} segment(s), to ${state.normalizedTo}, org ${state.orgId}, token ${state.tokenId}${state.clientId ? `, clientId ${state.clientId}` : ''}`,
          `  created ${state.createdAt}, sent ${state.sentAt ?? '-'}, delivered ${state.deliveredAt ?? '-'}, updated ${state.updatedAt}`,
          `workflow ${workflow.id} (${workflow.type}, ${workflow.status}${workflow.messagesInBatch ? `, holds ${workflow.messagesInBatch} messages` : ''}), run ${workflow.runId}${runs.length > 1 ? ` (${runs.length} runs, continued as new)` : ''}, ${workflow.historyLength} history events`,
          `  ${workflow.ui}`,
          'carrier:',
          ...(carrier.length > 0 ? carrier.map((e) => `  ${describeEvent(e)}`) : ['  (no carrier event yet)']),
          'transitions and DLR attempts:',
          ...(records.transitions.length > 0 ? records.transitions.flatMap((tr) => [
            `  #${tr.seq} ${tr.status} code ${tr.code} at ${tr.eventAt}`,
            ...records.attempts.filter((a) => a.seq === tr.seq).map((a) => `     attempt ${a.attempt}: ${a.outcome}${a.responseStatus === null ? '' : ` ${a.responseStatus}`} in ${a.latencyMs} ms at ${a.at}${a.error ? ` (${a.error})` : ''}`),
          ]) : ['  (none recorded yet)']),
          ...(dead.length > 0 ? ['dead letters:', ...dead.map((d) => `  #${d.seq} ${d.payload.status}: ${d.reason} (${d.failedAt}); re-drive with: npm run admin -- dlr redrive --message ${o.id}`)] : []),
        ];
        print(lines.join('\n'), { message: state, workflow, carrierEvents: carrier, transitions: records.transitions, attempts: records.attempts, deadLetters: dead, streamMessagesScanned: records.scanned });
      } finally {
        await t.close();
      }
    }));

  message.command('history').description("export the history of the workflow that holds a message (JSON), e.g. as a replay fixture")
    .requiredOption('--id <message id>').option('--out <file>').option('--run <run id>', 'one run of a batch that continued as new (default: the run that holds the message now)')
    .action(action(async (ctx, o: { id: string; out?: string; run?: string }) => {
      const holder = await holderOf(ctx.nats, o.id);
      const t = await connectTemporal({ address: temporal.address, namespace: temporal.namespace });
      try {
        const history = await t.client.workflow.getHandle(holder.workflowId, o.run).fetchHistory();
        const text = JSON.stringify(JSON.parse(historyToJSON(history)), null, 2);
        if (!o.out) {
          process.stdout.write(`${text}\n`);
          return;
        }
        writeFileSync(o.out, `${text}\n`);
        print(`history of ${holder.workflowId} written to ${o.out} (${history.events?.length ?? 0} events)`, { workflowId: holder.workflowId, out: o.out, events: history.events?.length ?? 0 });
      } finally {
        await t.close();
      }
    }));
}
