// Where a DLR webhook may point (spec 1 §6 rule 1: a public HTTPS endpoint). The rules that
// need no network: the URL's scheme and length, and whether an address is public. A webhook
// URL is checked when it is set (console, admin CLI) and its resolved addresses again at every
// connection (infra/webhook-target.ts), so a URL cannot be used to reach the platform's own
// network: loopback, private and link-local ranges, cloud metadata endpoints. Ranges come from
// ipaddr.js (its IANA special-purpose registries), not from tables of our own.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

const WEBHOOK_URL_MAX_LENGTH = 2000;

export interface WebhookTargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: http:// and non-public addresses allowed (local development). */
  readonly allowPrivateTargets: boolean;
}

/** The cloud instance-metadata endpoints (AWS, GCP, Azure; AWS over IPv6): refused under every policy. */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set(['169.254.169.254', 'fd00:ec2::254']);

const METADATA = 'cloud metadata endpoint';
const ALLOW_PRIVATE = 'WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows it for local development';

/** "<subject> (<range>); <how to allow it>": a metadata endpoint is never allowed. */
function refusal(subject: string, range: string): WebhookTargetRefusedError {
  return new WebhookTargetRefusedError(`${subject} (${range})${range === METADATA ? '' : `; ${ALLOW_PRIVATE}`}`);
}

/** A webhook target refused by these rules; `reason` is safe to show to the token's owner. */
export class WebhookTargetRefusedError extends Error {
  override readonly name = 'WebhookTargetRefusedError';
  constructor(readonly reason: string) {
    super(`webhook target refused: ${reason}`);
  }
}

export function isWebhookTargetRefused(err: unknown): err is WebhookTargetRefusedError {
  return err instanceof WebhookTargetRefusedError;
}

/**
 * The ipaddr.js range of a non-public address ('private', 'loopback', 'linkLocal',
 * 'carrierGradeNat', 'uniqueLocal', 'ipv4Mapped', 'multicast', 'reserved', …), or undefined for
 * a public unicast one. An IPv4 address embedded in IPv6 (mapped, NAT64, 6to4, Teredo) is not
 * public: which host it reaches depends on translators of the network.
 */
function nonPublicRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address';
  const parsed = ipaddr.parse(address);
  const range = parsed.range();
  return range === 'unicast' ? undefined : range;
}

/**
 * Why `address` may not receive webhooks under `policy` ('cloud metadata endpoint' or the
 * ipaddr.js range name), or undefined when it may.
 */
export function refusedRange(address: string, policy: WebhookTargetPolicy): string | undefined {
  if (ipaddr.isValid(address) && METADATA_ADDRESSES.has(ipaddr.parse(address).toString())) return METADATA;
  if (policy.allowPrivateTargets) return undefined;
  return nonPublicRange(address);
}

/** The refusal of a host name whose resolved addresses include `range` (the addresses are not echoed). */
export function resolvedTargetRefused(hostname: string, range: string): WebhookTargetRefusedError {
  return refusal(`${hostname.slice(0, 253)} resolves to a non-public address`, range);
}

export interface WebhookUrl {
  readonly url: URL;
  /** The host to resolve, without IPv6 brackets. */
  readonly hostname: string;
  /** The host is an IP address: nothing to resolve, already checked. */
  readonly literal: boolean;
}

/**
 * The URL rules that need no DNS: an absolute https URL (http too when private targets are
 * allowed) of at most 2000 characters; a host written as an IP address must be allowed.
 * Throws WebhookTargetRefusedError.
 */
export function checkWebhookUrl(text: string, policy: WebhookTargetPolicy): WebhookUrl {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) throw new WebhookTargetRefusedError(`the URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookTargetRefusedError('not an absolute URL');
  }
  if (url.protocol !== 'https:') {
    if (url.protocol !== 'http:') throw new WebhookTargetRefusedError(`the scheme ${url.protocol.slice(0, 20)} is not https`);
    if (!policy.allowPrivateTargets) throw new WebhookTargetRefusedError(`webhooks must use https (spec 1 §6); ${ALLOW_PRIVATE}`);
  }
  // The WHATWG parser has already normalised numeric IPv4 forms (2130706433, 0x7f.1) to dotted quads.
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(hostname) !== 0;
  const range = literal ? refusedRange(hostname, policy) : undefined;
  if (range !== undefined) throw refusal(`${hostname} is not a public address`, range);
  return { url, hostname, literal };
}
