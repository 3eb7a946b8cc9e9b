// The gateway-smpp role: the customer-facing SMPP server on SMPP_PORT (v3.4 and v5.0), with
// the process's acceptance core (roles/acceptance.ts, shared with HTTP). It needs NATS (KV
// and JetStream) and the account directory, never ClickHouse (DESIGN §3a), so it can run in
// any process. Behaviour: docs/smpp.md.
import type { Logger } from '../infra/logger';
import { JetStreamReceipts, startSmppServer, type BulkAcceptance, type MessageReader, type ScheduledCanceler, type SmppOptions, type SmppServer } from '../gateways/smpp';
import { buildAcceptanceCore } from './acceptance';
import type { Engines } from './engines';

export interface SmppServices {
  /** The acceptance core (SmsAcceptance): validation, pricing, balance, durable queueing. */
  readonly acceptance: BulkAcceptance;
  /** Current message states, for query_sm. */
  readonly states: MessageReader;
  /** cancel_sm of scheduled messages (the acceptance core's ScheduledCancel). */
  readonly scheduled?: ScheduledCanceler;
}

export interface SmppGatewayRole {
  readonly port: number;
  /** Bound sessions (all, or of one system_id). */
  sessions(systemId?: string): number;
  stop(): Promise<void>;
}

export interface SmppGatewayArgs {
  readonly port: number;
  readonly engines: Pick<Engines, 'nats' | 'directory'>;
  readonly services: SmppServices;
  readonly log: Logger;
  readonly options?: Partial<SmppOptions>;
}

/** The SMPP gateway's services alone (tests, or a process without the shared core). */
export async function buildSmppServices(engines: Pick<Engines, 'nats' | 'directory' | 'balances'>): Promise<{ services: SmppServices; close(): void }> {
  const core = await buildAcceptanceCore(engines);
  return { services: { acceptance: core.acceptance, states: core.states }, close: core.close };
}

export async function startSmppGateway(args: SmppGatewayArgs): Promise<SmppGatewayRole> {
  const { engines, services, log } = args;
  const server: SmppServer = await startSmppServer(
    args.port,
    {
      directory: engines.directory,
      acceptance: services.acceptance,
      states: services.states,
      ...(services.scheduled ? { scheduled: services.scheduled } : {}),
      receipts: new JetStreamReceipts(engines.nats, log),
      log,
    },
    args.options,
  );
  return { port: server.port, sessions: (systemId) => server.sessions(systemId), stop: () => server.stop() };
}
