// The WebhookSender port over undici's dispatcher (one pool of keep-alive connections per webhook
// origin): one POST, bounded by its timeout (until the whole answer is read), the body read and
// dropped. Not node:http nor fetch: a DLR's request costs about a third less CPU through undici's
// dispatch than through http.request (bench/webhook-client.ts), and fetch's WHATWG streams cost
// more than the rest of a DLR's delivery. A token's webhook URL is parsed once per process, not
// once per DLR. Targets are checked (spec 1 §6 rule 1, core/sms/webhook-target.ts): the URL when
// it is parsed, the resolved addresses at each new connection, and the connection made to the
// addresses checked (infra/webhook-target.ts, the connector's `lookup`); a refused target is a
// failed attempt (WebhookTargetRefusedError). Redirects are never followed.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { Agent, type Dispatcher } from 'undici';
import { checkWebhookUrl, type WebhookRequest, type WebhookSender, type WebhookTargetPolicy } from '../core/sms';
import { checkedLookup, systemResolver, type Resolver } from './webhook-target';

/** Connections kept per webhook origin. */
const MAX_SOCKETS_PER_ORIGIN = 128;
/** Parsed webhook URLs remembered (one per token's webhook in use). */
const TARGETS_KEPT = 10_000;

interface Target {
  readonly origin: string;
  /** Path and query. */
  readonly path: string;
  /** `authorization: Basic …` of a URL with credentials (as node:http sends them), else none. */
  readonly authorization: string | undefined;
}

export interface WebhookSenderOptions extends Partial<WebhookTargetPolicy> {
  /** How host names are resolved (tests hand in their own). */
  readonly resolver?: Resolver;
}

function timeoutError(timeoutMs: number): Error {
  const err = new Error(`no answer within ${timeoutMs} ms`);
  err.name = 'TimeoutError';
  return err;
}

export class HttpWebhookSender implements WebhookSender {
  private readonly targets = new Map<string, Target>();
  private readonly policy: WebhookTargetPolicy;
  private readonly dispatcher: Agent;

  constructor(options: WebhookSenderOptions = {}) {
    this.policy = { allowPrivateTargets: options.allowPrivateTargets ?? false };
    const lookup: LookupFunction = checkedLookup(this.policy, options.resolver ?? systemResolver);
    this.dispatcher = new Agent({ connections: MAX_SOCKETS_PER_ORIGIN, connect: { lookup } });
  }

  /** The origin and path of a webhook URL; throws WebhookTargetRefusedError for a URL the policy refuses. */
  private target(raw: string): Target {
    const known = this.targets.get(raw);
    if (known) return known;
    const { url } = checkWebhookUrl(raw, this.policy);
    const { auth } = urlToHttpOptions(url);
    const target = { origin: url.origin, path: `${url.pathname}${url.search}`, authorization: auth ? `Basic ${Buffer.from(auth).toString('base64')}` : undefined };
    if (this.targets.size >= TARGETS_KEPT) this.targets.clear();
    this.targets.set(raw, target);
    return target;
  }

  post(request: WebhookRequest): Promise<number> {
    let target: Target;
    try {
      target = this.target(request.url);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    // Headers as a flat list (name, value, …): written as given, without a header object per request.
    const headers: string[] = [];
    if (target.authorization) headers.push('authorization', target.authorization);
    for (const name in request.headers) headers.push(name, request.headers[name] as string);
    return new Promise((resolve, reject) => {
      let status = 0;
      let controller: Dispatcher.DispatchController | undefined;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller?.abort(timeoutError(request.timeoutMs));
      }, request.timeoutMs);
      this.dispatcher.dispatch({ origin: target.origin, path: target.path, method: 'POST', headers, body: request.body }, {
        onRequestStart(c) {
          controller = c;
          if (timedOut) c.abort(timeoutError(request.timeoutMs));
        },
        onResponseStart(_c, statusCode) { status = statusCode; },
        onResponseData() { /* the answer's body is read and dropped */ },
        onResponseEnd() {
          clearTimeout(timer);
          resolve(status);
        },
        onResponseError(_c, err) {
          clearTimeout(timer);
          reject(timedOut ? timeoutError(request.timeoutMs) : err);
        },
      });
    });
  }

  close(): void {
    void this.dispatcher.destroy().catch(() => undefined);
  }
}

export interface WebhookProbeAnswer {
  readonly status: number;
  /** The start of the answer's body (at most `keepChars` characters). */
  readonly body: string;
}

/**
 * One POST outside the pooled agents, with the same target checks (the console's "Send test
 * DLR"): the answer's status and the start of its body. Rejects with WebhookTargetRefusedError
 * before any connection to a refused target, with a TimeoutError after `timeoutMs`.
 */
export function postOnce(request: WebhookRequest, policy: WebhookTargetPolicy, resolver: Resolver = systemResolver, keepChars = 500): Promise<WebhookProbeAnswer> {
  let url: URL;
  try {
    url = checkWebhookUrl(request.url, policy).url;
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  const options: http.RequestOptions = {
    ...urlToHttpOptions(url), method: 'POST', agent: false, lookup: checkedLookup(policy, resolver),
    headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
  };
  return send<WebhookProbeAnswer>(url.protocol === 'https:', options, request, (res, done, fail) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => { if (body.length < keepChars) body += chunk; });
    res.on('error', fail);
    res.on('end', () => done({ status: res.statusCode ?? 0, body: body.slice(0, keepChars) }));
  });
}

/** One request with a deadline (a TimeoutError after `request.timeoutMs`); `read` turns the answer into the result. */
function send<T>(secure: boolean, options: http.RequestOptions, request: WebhookRequest, read: (res: http.IncomingMessage, done: (value: T) => void, fail: (err: Error) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const fail = (err: Error): void => {
      clearTimeout(timer);
      reject(err);
    };
    const done = (value: T): void => {
      clearTimeout(timer);
      resolve(value);
    };
    const onAnswer = (res: http.IncomingMessage): void => read(res, done, fail);
    const req = secure ? https.request(options, onAnswer) : http.request(options, onAnswer);
    const timer = setTimeout(() => req.destroy(timeoutError(request.timeoutMs)), request.timeoutMs);
    req.on('error', fail);
    req.end(request.body);
  });
}
