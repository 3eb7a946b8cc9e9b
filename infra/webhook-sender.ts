// The WebhookSender port over node:http(s) with keep-alive agents: one POST, bounded by its
// timeout (until the whole answer is read), the body read and dropped. Not fetch: its WHATWG
// streams (request body, tee, response body) cost more CPU than the rest of a DLR's delivery.
// A token's webhook URL is parsed once per process, not once per DLR.
import http from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import type { WebhookRequest, WebhookSender } from '../core/sms/lifecycle-ports';

/** Connections kept per webhook origin. */
const MAX_SOCKETS_PER_ORIGIN = 128;
/** Parsed webhook URLs remembered (one per token's webhook in use). */
const TARGETS_KEPT = 10_000;

interface Target {
  readonly secure: boolean;
  readonly options: http.RequestOptions;
  /** The Host header (host and port as in the URL). */
  readonly host: string;
}

export class HttpWebhookSender implements WebhookSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN }),
    https: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN }),
  };
  private readonly targets = new Map<string, Target>();

  /** The request options of a webhook URL; throws when it is not an http(s) URL. */
  private target(raw: string): Target {
    const known = this.targets.get(raw);
    if (known) return known;
    const url = new URL(raw);
    const secure = url.protocol === 'https:';
    if (!secure && url.protocol !== 'http:') throw new Error(`webhook URL scheme ${url.protocol} is not http or https`);
    const options: http.RequestOptions = {
      ...urlToHttpOptions(url), method: 'POST', agent: secure ? this.agents.https : this.agents.http,
    };
    if (this.targets.size >= TARGETS_KEPT) this.targets.clear();
    const target = { secure, options, host: url.host };
    this.targets.set(raw, target);
    return target;
  }

  post(request: WebhookRequest): Promise<number> {
    return new Promise((resolve, reject) => {
      let target: Target;
      try {
        target = this.target(request.url);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      // Headers as a flat list (name, value, …): the request writes them as given, without a
      // setHeader call and a header object per request (about 10 % of a DLR's sending CPU).
      const headers: string[] = ['host', target.host, 'content-length', String(Buffer.byteLength(request.body))];
      for (const name in request.headers) headers.push(name, request.headers[name] as string);
      const options: http.RequestOptions = { ...target.options, setHost: false, headers };
      const onAnswer = (res: http.IncomingMessage): void => {
        res.on('error', fail);
        res.on('end', () => { clearTimeout(timer); resolve(res.statusCode ?? 0); });
        res.resume();
      };
      const req = target.secure ? https.request(options, onAnswer) : http.request(options, onAnswer);
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
