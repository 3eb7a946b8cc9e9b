// The webhook target rules (core/sms/webhook-target.ts) against DNS: a host's addresses are
// resolved once (dns.lookup, all of them), refused when any is not allowed, and the socket is
// handed exactly the addresses that were checked: the `lookup` of the request, so a name
// cannot resolve to a public address for the check and to a private one for the connection
// (DNS rebinding). Redirects are never followed (node:http does not).
import dns, { type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { checkWebhookUrl, refusedRange, resolvedTargetRefused, WebhookTargetRefusedError, type WebhookTargetPolicy, type WebhookUrl } from '../core/sms';

/** Every address of a host name (dns.lookup with all: true); a test hands in its own. */
export type Resolver = (hostname: string, family: number) => Promise<readonly LookupAddress[]>;

export const systemResolver: Resolver = (hostname, family) => dns.promises.lookup(hostname, { all: true, family, verbatim: true });

const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_NONAME', 'EAI_NODATA', 'ENODATA']);

/** The addresses of `hostname`, every one allowed under `policy`; throws WebhookTargetRefusedError. */
async function resolveAllowed(hostname: string, policy: WebhookTargetPolicy, resolver: Resolver = systemResolver, family = 0): Promise<readonly LookupAddress[]> {
  let addresses: readonly LookupAddress[];
  try {
    addresses = await resolver(hostname, family);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (code !== undefined && UNRESOLVED.has(code)) throw new WebhookTargetRefusedError(`the host ${hostname.slice(0, 253)} cannot be resolved`);
    throw err;
  }
  if (addresses.length === 0) throw new WebhookTargetRefusedError(`the host ${hostname.slice(0, 253)} cannot be resolved`);
  for (const { address } of addresses) {
    const range = refusedRange(address, policy);
    if (range !== undefined) throw resolvedTargetRefused(hostname, range);
  }
  return addresses;
}

/** A webhook URL checked when it is set: its scheme, and every address its host resolves to now. */
export async function checkWebhookTarget(text: string, policy: WebhookTargetPolicy, resolver: Resolver = systemResolver): Promise<WebhookUrl> {
  const target = checkWebhookUrl(text, policy);
  if (!target.literal) await resolveAllowed(target.hostname, policy, resolver);
  return target;
}

/**
 * The `lookup` option of a webhook request: the socket connects to the addresses this lookup
 * checked, and to nothing else. (node:net skips the lookup for an IP literal host:
 * checkWebhookUrl has checked it.)
 */
export function checkedLookup(policy: WebhookTargetPolicy, resolver: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, policy, resolver, options.family === 4 || options.family === 6 ? options.family : 0).then(
      (addresses) => {
        if (options.all) {
          callback(null, addresses as LookupAddress[]);
          return;
        }
        const first = addresses[0] as LookupAddress;
        callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}
