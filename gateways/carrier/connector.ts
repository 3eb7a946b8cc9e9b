// The carrier connector: keeps one long-lived SMPP bind_transceiver per upstream SMSC route
// (./smsc-bind.ts), submits the messages handed over on `carrier.submit` (a durable JetStream
// pull consumer; ./submissions.ts), and turns what the SMSCs report into `carrier.events`
// (submitted, submit_failed, receipt) and `carrier.inbound` (mobile-originated messages;
// ./deliveries.ts). Contract: core/bus/carrier.ts (read through core/carrier); behaviour and tables: docs/carrier.md.
//
// Delivery guarantees: a carrier.submit message is acknowledged only after every segment's
// outcome event is on the stream; a deliver_sm is answered only after its event is on the
// stream, so a crash makes the SMSC send it again. Events carry msgIDs, so repeats within the
// stream's duplicate window are stored once.
import { setMaxListeners } from 'node:events';
import type { CarrierRoute } from '../../config';
import { consumeEach, ensureDurable } from '../../infra/consumer';
import type { Logger } from '../../infra/logger';
import { CONSUMERS, STREAMS, SUBJECTS } from '../../core/bus/names';
import type { Nats } from '../../infra/nats';
import { CarrierDeliveries } from './deliveries';
import { CarrierWriter } from './events';
import { SmscBind } from './smsc-bind';
import { CarrierSubmissions } from './submissions';

export const CONNECTOR_CONSUMER = CONSUMERS.carrierConnector;

/** Outstanding carrier.submit messages of this consumer (each may hold several segments). */
const MAX_ACK_PENDING = 2000;
const ACK_WAIT_MS = 60_000;
const STOP_GRACE_MS = 3000;

export interface ConnectorOptions {
  readonly routes: readonly CarrierRoute[];
  readonly nats: Nats;
  readonly log: Logger;
  /** Durable consumer name; default `carrier-connector`. */
  readonly consumer?: string;
  /** Subject consumed; default `carrier.submit`. */
  readonly subject?: string;
}

export interface CarrierConnector {
  stop(): Promise<void>;
}

export async function startCarrierConnector(opts: ConnectorOptions): Promise<CarrierConnector> {
  const { nats, log } = opts;
  const consumerName = opts.consumer ?? CONNECTOR_CONSUMER;
  const subject = opts.subject ?? SUBJECTS.carrierSubmit;
  const abort = new AbortController();
  // Every segment waiting to retry listens for the stop.
  setMaxListeners(0, abort.signal);
  const writer = new CarrierWriter(nats, log, abort.signal);
  const deliveries = new CarrierDeliveries(writer, log);
  const binds = new Map(opts.routes.map((route) => [route.name, new SmscBind(route, log, (r, pdu) => deliveries.onDeliver(r, pdu))]));
  const submissions = new CarrierSubmissions(opts.routes, binds, writer, log, abort.signal);

  await ensureDurable(nats.jsm, { stream: STREAMS.carrier.name, name: consumerName, filterSubjects: [subject], maxAckPending: MAX_ACK_PENDING, ackWaitMs: ACK_WAIT_MS });
  for (const bind of binds.values()) bind.start();
  const feed = consumeEach({ js: nats.js, stream: STREAMS.carrier.name, durable: consumerName, pull: 500, log, handle: (msg) => submissions.onMessage(msg) });

  log.info({ routes: opts.routes.map((r) => ({ name: r.name, host: r.host, port: r.port, prefixes: r.prefixes, window: r.window })), consumer: consumerName }, 'carrier connector running');

  return {
    stop: async () => {
      await feed.stop();
      abort.abort();
      for (const bind of binds.values()) bind.interrupt();
      // Submissions waiting for a bind give up at once; one waiting for its submit_sm_resp gets
      // a moment, then the unbind cuts it short and its message is redelivered later.
      const settled = feed.idle();
      await Promise.race([settled, new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref())]);
      deliveries.stop();
      await Promise.all([...binds.values()].map((bind) => bind.stop()));
      await settled;
      log.info('carrier connector stopped');
    },
  };
}
