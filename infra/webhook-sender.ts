// The WebhookSender port over node:http(s) with keep-alive agents: one POST, bounded by its
// timeout (until the whole answer is read), the body read and dropped. Not fetch: its WHATWG
// streams (request body, tee, response body) cost more CPU than the rest of a DLR's delivery.
import http from 'node:http';
import https from 'node:https';
import type { WebhookRequest, WebhookSender } from '../core/sms/lifecycle-ports';

/** Connections kept per webhook origin. */
const MAX_SOCKETS_PER_ORIGIN = 128;

export class HttpWebhookSender implements WebhookSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN }),
    https: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN }),
  };

  post(request: WebhookRequest): Promise<number> {
    return new Promise((resolve, reject) => {
      let url: URL;
      try {
        url = new URL(request.url);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      const secure = url.protocol === 'https:';
      if (!secure && url.protocol !== 'http:') {
        reject(new Error(`webhook URL scheme ${url.protocol} is not http or https`));
        return;
      }
      const options = { method: 'POST', headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) } };
      const onAnswer = (res: http.IncomingMessage): void => {
        res.on('error', fail);
        res.on('end', () => { clearTimeout(timer); resolve(res.statusCode ?? 0); });
        res.resume();
      };
      const req = secure ? https.request(url, { ...options, agent: this.agents.https }, onAnswer) : http.request(url, { ...options, agent: this.agents.http }, onAnswer);
      function fail(err: Error): void {
        clearTimeout(timer);
        reject(err);
      }
      const timer = setTimeout(() => {
        const err = new Error(`no answer within ${request.timeoutMs} ms`);
        err.name = 'TimeoutError';
        req.destroy(err);
      }, request.timeoutMs);
      req.on('error', fail);
      req.end(request.body);
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}
