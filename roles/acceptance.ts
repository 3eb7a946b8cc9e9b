// The acceptance core of a process, built once whichever gateways run in it (HTTP, SMPP) and
// shared with the lifecycle bridge: one SmsAcceptance, one message-state store, one watched
// opt-out mirror per process. Needs NATS and the account directory, never ClickHouse.
import { SmsAcceptance } from '../core/sms/acceptance';
import type { Funds, PriceBook } from '../core/sms/ports';
import { JetStreamAcceptedQueue, KvClientIds, KvMessageStates, MirroredOptOuts } from '../stores/message-state';
import type { Engines } from './engines';

export interface AcceptanceCore {
  readonly acceptance: SmsAcceptance;
  readonly states: KvMessageStates;
  readonly optOuts: MirroredOptOuts;
  readonly prices: PriceBook;
  readonly funds: Funds;
  /** Stops the opt-out mirror. */
  close(): void;
}

export async function buildAcceptanceCore(engines: Pick<Engines, 'nats' | 'directory' | 'balances'>): Promise<AcceptanceCore> {
  const states = new KvMessageStates(engines.nats.pipeline);
  const optOuts = await MirroredOptOuts.open(engines.nats.kv.optouts);
  const prices: PriceBook = { price: engines.directory.price.bind(engines.directory) };
  const funds: Funds = engines.balances;
  const acceptance = new SmsAcceptance({ prices, funds, states, optOuts, clientIds: new KvClientIds(engines.nats.kv.idempotency), queue: new JetStreamAcceptedQueue(engines.nats.pipeline) });
  return { acceptance, states, optOuts, prices, funds, close: () => optOuts.stop() };
}
