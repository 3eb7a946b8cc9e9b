// Bridges from JetStream to Temporal, run next to the worker:
//  - starter:  `sms.accepted` → one smsLifecycle workflow per message (id `sms-<id>`, so a
//              repeated start is harmless); the stream message is acknowledged only once every
//              workflow it carries exists, so no accepted message is left without one;
//  - events:   `carrier.events` → `carrierEvent` signals, in stream order per message;
//  - inbound:  `carrier.inbound` → opt-out on STOP, and an inbound/stop DLR to the webhook of
//              the token that owns the number (spec 1 §6).
import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import { WorkflowIdConflictPolicy, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { CarrierEvent, CarrierInbound } from '../core/carrier/types';
import { newId } from '../core/ids';
import type { SmsMessage } from '../core/sms/message';
import type { Logger } from '../infra/logger';
import { ensureConsumer, STREAMS, SUBJECTS, type Nats } from '../infra/nats';
import type { AccountDirectory } from '../stores/account-directory';
import type { MirroredOptOuts } from '../stores/message-state';
import { smsInboundSubject } from '../gateways/smpp/jetstream';
import type { InboundRecord } from '../gateways/smpp/receipts';
import type { WebhookSchedule } from '../workflows/presets';
import type { DlrDelivery, LifecycleInput } from '../workflows/types';

export const STOP_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'ARRET', 'STOPP'];

export function isStopKeyword(text: string): boolean {
  return STOP_KEYWORDS.includes(text.trim().toUpperCase());
}

export interface BridgeDeps {
  readonly nats: Nats;
  readonly client: Client;
  /** True when `client` is on the connection of a worker polling `taskQueue` in this process. */
  readonly eagerStart: boolean;
  readonly taskQueue: string;
  readonly directory: AccountDirectory;
  readonly optOuts: MirroredOptOuts;
  readonly validityMs: number;
  readonly webhook: WebhookSchedule;
  readonly log: Logger;
}

interface Running {
  stop(): Promise<void>;
}

async function durable(nats: Nats, name: string, stream: string, subject: string, maxAckPending: number): Promise<Consumer> {
  await ensureConsumer(nats.jsm, stream, {
    durable_name: name,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: subject,
    max_ack_pending: maxAckPending,
    ack_wait: 60_000_000_000,
  });
  return nats.js.consumers.get(stream, name);
}

/**
 * Runs `handle` over batches of a consumer; each message is acked or naked by `handle`. A batch is
 * whatever has arrived while the previous one was handled (up to `batchSize`): large under load,
 * a single message when traffic is light, so a quiet system adds no batching delay.
 */
function pump(consumer: Consumer, batchSize: number, handle: (msgs: JsMsg[]) => Promise<void>, log: Logger, name: string): Running {
  let running = true;
  let messages: ConsumerMessages | undefined;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (running) {
      try {
        messages = await consumer.consume({ max_messages: batchSize });
        const arrived: JsMsg[] = [];
        let ended = false;
        const reader = (async () => {
          for await (const msg of messages) { arrived.push(msg); wake?.(); }
        })().finally(() => { ended = true; wake?.(); });
        while (running && !ended) {
          if (arrived.length === 0) {
            await new Promise<void>((resolve) => { wake = resolve; });
            wake = undefined;
            continue;
          }
          await handle(arrived.splice(0, batchSize));
        }
        await reader;
      } catch (err) {
        messages?.stop();
        if (!running) break;
        log.warn({ err, consumer: name }, 'bridge: consumer failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  })();
  return { stop: async () => { running = false; messages?.stop(); wake?.(); await loop; } };
}

export async function startLifecycleBridge(deps: BridgeDeps): Promise<Running> {
  const { nats, client, log } = deps;

  const starter = pump(await durable(nats, 'lifecycle-starter', STREAMS.sms.name, SUBJECTS.smsAccepted, 400), 50, async (msgs) => {
    await Promise.all(msgs.map(async (msg) => {
      try {
        const { messages } = msg.json<{ messages: SmsMessage[] }>();
        await Promise.all(messages.map((m) => {
          const input: LifecycleInput & { webhook: WebhookSchedule } = {
            messageId: m.id, orgId: m.orgId, tokenId: m.tokenId, clientId: m.clientId, segments: m.messagesCount,
            chargedMicros: m.priceUserMicros, validityMs: deps.validityMs, webhooks: m.source !== 'legacy', webhook: deps.webhook,
          };
          return client.workflow.start('smsLifecycle', {
            taskQueue: deps.taskQueue,
            workflowId: `sms-${m.id}`,
            args: [input],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            requestEagerStart: deps.eagerStart,
          });
        }));
        msg.ack();
      } catch (err) {
        log.error({ err, seq: msg.seq }, 'starter: could not start lifecycle workflows; will retry');
        msg.nak(1000);
      }
    }));
  }, log, 'lifecycle-starter');

  const events = pump(await durable(nats, 'lifecycle-events', STREAMS.carrier.name, SUBJECTS.carrierEvents, 2000), 500, async (msgs) => {
    // The events of one message go as one signal, in stream order; messages go in parallel.
    const byMessage = new Map<string, JsMsg[]>();
    for (const msg of msgs) {
      let id = '';
      try { id = msg.json<CarrierEvent>().messageId; } catch { /* unreadable: acked below */ }
      byMessage.set(id, [...(byMessage.get(id) ?? []), msg]);
    }
    await Promise.all([...byMessage.entries()].map(async ([id, list]) => {
      if (!id) { for (const msg of list) msg.ack(); return; }
      try {
        await client.workflow.getHandle(`sms-${id}`).signal('carrierEvent', list.map((msg) => msg.json<CarrierEvent>()));
        for (const msg of list) msg.ack();
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) {
          log.warn({ messageId: id }, 'carrier event for a message without a running lifecycle (finished or unknown); dropped');
          for (const msg of list) msg.ack();
        } else {
          log.warn({ err, messageId: id }, 'signal failed; will retry');
          for (const msg of list) msg.nak(1000);
        }
      }
    }));
  }, log, 'lifecycle-events');

  const inbound = pump(await durable(nats, 'lifecycle-inbound', STREAMS.carrier.name, SUBJECTS.carrierInbound, 500), 50, async (msgs) => {
    for (const msg of msgs) {
      try {
        const mo = msg.json<CarrierInbound>();
        const token = deps.directory.tokenByNumber(mo.to);
        if (!token || token.revokedAt) {
          log.warn({ to: mo.to }, 'inbound message for a number no token owns; dropped');
          msg.ack();
          continue;
        }
        const stop = isStopKeyword(mo.text);
        if (stop && token.projectId) await deps.optOuts.optOut(token.projectId, mo.from, mo.at);
        const delivery: DlrDelivery = { tokenId: token.id, messageId: newId(), seq: 1, payload: { id: '', status: stop ? 'stop' : 'inbound', code: 0, eventAt: mo.at, message: mo.text } };
        const withId: DlrDelivery = { ...delivery, payload: { ...delivery.payload, id: delivery.messageId } };
        // The token's SMPP receiver sessions get it as deliver_sm (gateways/smpp, docs/smpp.md).
        const inboundRecord: InboundRecord = { id: delivery.messageId, tokenId: token.id, from: mo.from, to: mo.to, text: mo.text, status: stop ? 'stop' : 'inbound', at: mo.at };
        await nats.js.publish(smsInboundSubject(token.id), JSON.stringify({ inbound: [inboundRecord] }), { msgID: `inbound-${mo.inboundId}` });
        await client.workflow.start('dlrDelivery', {
          taskQueue: deps.taskQueue,
          workflowId: `inbound-${mo.inboundId}`,
          args: [withId, deps.webhook],
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        });
        msg.ack();
      } catch (err) {
        log.error({ err }, 'inbound: could not route; will retry');
        msg.nak(1000);
      }
    }
  }, log, 'lifecycle-inbound');

  log.info('lifecycle bridge running');
  return { stop: async () => { await Promise.all([starter.stop(), events.stop(), inbound.stop()]); } };
}
