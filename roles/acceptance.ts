// The acceptance core of a process, built once whichever gateways run in it (HTTP, SMPP) and
// shared with the lifecycle bridge: one SmsAcceptance, one message-state store, one watched
// opt-out mirror per process. Needs NATS and the account directory, never ClickHouse.
import { ScheduledCancel, SmsAcceptance, type Funds, type PriceBook } from '../core/sms';
import { JetStreamAcceptedQueue } from '../infra/bus/accepted-queue';
import { KvClientIds } from '../stores/client-ids';
import { KvMessageStates } from '../stores/message-state';
import { MirroredOptOuts } from '../stores/opt-outs';
import { TemporalScheduledSends } from '../stores/scheduled-sends';
import type { Engines } from './engines';

export interface AcceptanceCore {
  readonly acceptance: SmsAcceptance;
  readonly states: KvMessageStates;
  readonly optOuts: MirroredOptOuts;
  readonly prices: PriceBook;
  readonly funds: Funds;
  /** Cancels scheduled messages (HTTP, SMPP cancel_sm, the console); absent without a Temporal client. */
  readonly scheduledCancel?: ScheduledCancel;
  /** Stops the opt-out mirror. */
  close(): void;
}

export async function buildAcceptanceCore(engines: Pick<Engines, 'nats' | 'directory' | 'balances'> & Partial<Pick<Engines, 'temporal'>>): Promise<AcceptanceCore> {
  const states = new KvMessageStates(engines.nats.pipeline);
  // The bucket's own TTL (MESSAGE_STATE_TTL_HOURS when it was created; 0: none) bounds scheduledAt.
  const ttl = (await engines.nats.kv.messages.status()).ttl;
  const optOuts = await MirroredOptOuts.open(engines.nats.kv.optouts);
  const prices: PriceBook = { price: engines.directory.price.bind(engines.directory) };
  const funds: Funds = engines.balances;
  const acceptance = new SmsAcceptance({ prices, funds, states, optOuts, stateLifetimeMs: ttl > 0 ? ttl : Infinity, clientIds: new KvClientIds(engines.nats.kv.idempotency), queue: new JetStreamAcceptedQueue(engines.nats.pipeline) });
  const scheduledCancel = engines.temporal ? new ScheduledCancel({ states, scheduled: new TemporalScheduledSends(engines.temporal.client) }) : undefined;
  return { acceptance, states, optOuts, prices, funds, ...(scheduledCancel ? { scheduledCancel } : {}), close: () => optOuts.stop() };
}
