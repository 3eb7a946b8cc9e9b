// A DLR webhook receiver on loopback for tests: records every request (body, signature
// headers, arrival time) and answers with a status the test controls.
import { createServer, type Server } from 'node:http';
import { eventually } from './eventually';

export interface ReceivedDlr {
  readonly body: Record<string, unknown>;
  readonly raw: string;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly at: number;
  readonly answered: number;
}

export interface WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedDlr[];
  /** Status to answer with (default 200); may depend on the request. */
  respond: (dlr: Omit<ReceivedDlr, 'answered'>) => number;
  forMessage(id: string): ReceivedDlr[];
  waitFor(predicate: (all: ReceivedDlr[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedDlr[] = [];
  const holder: { server?: Server } = {};
  const receiver: WebhookReceiver = {
    url: '',
    received,
    respond: () => 200,
    forMessage: (id) => received.filter((r) => r.body['id'] === id && r.answered >= 200 && r.answered < 300),
    async waitFor(predicate, timeoutMs = 20_000) {
      await eventually(() => predicate(received) || Promise.reject(new Error(`received ${JSON.stringify(received.map((r) => r.body))}`)), { what: 'the webhook receiver\'s condition', timeoutMs });
    },
    close: () => new Promise<void>((resolve) => {
      if (!holder.server) return resolve();
      holder.server.close(() => resolve());
      holder.server.closeAllConnections();
    }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try { body = JSON.parse(raw) as Record<string, unknown>; } catch { /* recorded as empty */ }
      const request = { body, raw, headers: req.headers, at: Date.now() };
      const status = receiver.respond(request);
      received.push({ ...request, answered: status });
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  holder.server = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  (receiver as { url: string }).url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/dlr`;
  return receiver;
}
