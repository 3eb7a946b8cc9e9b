// Mobile-originated messages on demand: a core NATS request on `simulator.mo` (a MoRequest)
// makes the simulator send a deliver_sm to one of its bound receivers, and is answered with
// whether the client acknowledged it (a MoReply).
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../../infra/logger';

/** Body of a `simulator.mo` request. */
export interface MoRequest {
  readonly from: string;
  readonly to: string;
  readonly text: string;
}

export type MoReply = { readonly ok: true } | { readonly ok: false; readonly reason: string };

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
          const request = msg.json<MoRequest>();
          if (typeof request.from !== 'string' || typeof request.to !== 'string' || typeof request.text !== 'string') reply = { ok: false, reason: 'from, to and text are required strings' };
          else reply = await send(request);
        } catch (e) {
          reply = { ok: false, reason: e instanceof Error ? e.message : String(e) };
        }
        msg.respond(JSON.stringify(reply));
      })();
    },
  });
}
