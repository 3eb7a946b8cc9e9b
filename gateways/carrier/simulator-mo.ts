// Mobile-originated messages on demand: a core NATS request on `simulator.mo` (a MoRequest)
// makes the simulator send a deliver_sm to one of its bound receivers, and is answered with
// whether the client acknowledged it (a MoReply).
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import { decode, isUnreadableBusMessage, type MoReply, type MoRequest } from '../../core/bus';
import type { Logger } from '../../infra/logger';

export type { MoReply, MoRequest } from '../../core/bus';

export function serveMoRequests(nc: NatsConnection, subject: string, send: (request: MoRequest) => Promise<MoReply>, log: Logger): Subscription {
  return nc.subscribe(subject, {
    callback: (err: Error | null, msg: Msg) => {
      if (err) {
        log.warn({ err }, 'simulator: MO subscription error');
        return;
      }
      void (async () => {
        let reply: MoReply;
        try {
          let request: MoRequest | undefined;
          try {
            request = decode('moRequest', msg.data);
          } catch (e) {
            if (!isUnreadableBusMessage(e)) throw e;
          }
          reply = request ? await send(request) : { ok: false, reason: 'from, to and text are required strings' };
        } catch (e) {
          reply = { ok: false, reason: e instanceof Error ? e.message : String(e) };
        }
        msg.respond(JSON.stringify(reply));
      })();
    },
  });
}
