// The WebhookSender port over node:http(s) with keep-alive agents: one POST, bounded by its
// timeout (until the whole answer is read), the body read and dropped. Not fetch: its WHATWG
// streams (request body, tee, response body) cost more CPU than the rest of a DLR's delivery.
// A token's webhook URL is parsed once per process, not once per DLR. Targets are checked
// (spec 1 §6 rule 1, core/sms/webhook-target.ts): the URL when it is parsed, the resolved
// addresses at each new connection, and the connection made to the addresses checked
// (infra/webhook-target.ts); a refused target is a failed attempt (WebhookTargetRefusedError).
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { urlToHttpOptions } from 'node:url';
import { checkWebhookUrl, type WebhookRequest, type WebhookSender, type WebhookTargetPolicy } from '../core/sms';
import { checkedLookup, systemResolver, type Resolver } from './webhook-target';

/** Connections kept per webhook origin. */
const MAX_SOCKETS_PER_ORIGIN = 128;
/** Parsed webhook URLs remembered (one per token's webhook in use). */
const TARGETS_KEPT = 10_000;

interface Target {
  readonly secure: boolean;
  readonly options: http.RequestOptions;
  /** The Host header (host and port as in the URL). */
  readonly host: string;
  /** `Basic …` of a URL with credentials: node:http adds none from `auth` when the headers are a flat list. */
  readonly authorization: string | undefined;
}

export interface WebhookSenderOptions extends Partial<WebhookTargetPolicy> {
  /** How host names are resolved (tests hand in their own). */
  readonly resolver?: Resolver;
}

export class HttpWebhookSender implements WebhookSender {
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN }),
    https: new https.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS_PER_ORIGIN }),
  };
  private readonly targets = new Map<string, Target>();
  private readonly policy: WebhookTargetPolicy;
  private readonly lookup: LookupFunction;

  constructor(options: WebhookSenderOptions = {}) {
    this.policy = { allowPrivateTargets: options.allowPrivateTargets ?? false };
    this.lookup = checkedLookup(this.policy, options.resolver ?? systemResolver);
  }

  /** The request options of a webhook URL; throws WebhookTargetRefusedError for a URL the policy refuses. */
  private target(raw: string): Target {
    const known = this.targets.get(raw);
    if (known) return known;
    const { url } = checkWebhookUrl(raw, this.policy);
    const secure = url.protocol === 'https:';
    const { auth, ...fromUrl } = urlToHttpOptions(url);
    const options: http.RequestOptions = { ...fromUrl, method: 'POST', agent: secure ? this.agents.https : this.agents.http, lookup: this.lookup };
    if (this.targets.size >= TARGETS_KEPT) this.targets.clear();
    const target = { secure, options, host: url.host, authorization: auth ? `Basic ${Buffer.from(auth).toString('base64')}` : undefined };
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
    // Headers as a flat list (name, value, …): the request writes them as given, without a
    // setHeader call and a header object per request (about 10 % of a DLR's sending CPU).
    const headers: string[] = ['host', target.host, 'content-length', String(Buffer.byteLength(request.body))];
    if (target.authorization) headers.push('authorization', target.authorization);
    for (const name in request.headers) headers.push(name, request.headers[name] as string);
    const options: http.RequestOptions = { ...target.options, setHost: false, headers };
    return send<number>(target.secure, options, request, (res, done, fail) => {
      res.on('error', fail);
      res.on('end', () => done(res.statusCode ?? 0));
      res.resume();
    });
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
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
    const timer = setTimeout(() => {
      const err = new Error(`no answer within ${request.timeoutMs} ms`);
      err.name = 'TimeoutError';
      req.destroy(err);
    }, request.timeoutMs);
    req.on('error', fail);
    req.end(request.body);
  });
}
