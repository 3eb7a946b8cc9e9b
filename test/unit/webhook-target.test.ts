// Where a DLR webhook may point (spec 1 §6 rule 1: a public HTTPS endpoint): the pure rules
// (core/sms/webhook-target.ts), the set-time check and the pinned lookup against a resolver
// (infra/webhook-target.ts), and the two settings (WEBHOOK_ALLOW_PRIVATE_TARGETS, TRUST_PROXY).
import type { LookupAddress } from 'node:dns';
import { ConfigError, loadConfig, parseTrustProxy } from '../../config';
import { checkWebhookUrl, refusedRange, WebhookTargetRefusedError } from '../../core/sms/webhook-target';
import { checkedLookup, checkWebhookTarget, type Resolver } from '../../infra/webhook-target';

const STRICT = { allowPrivateTargets: false };
const LOCAL = { allowPrivateTargets: true };

function resolverOf(table: Record<string, readonly string[]>): Resolver & { calls: number } {
  const counted = Object.assign(async (hostname: string): Promise<LookupAddress[]> => {
    counted.calls += 1;
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  }, { calls: 0 });
  return counted;
}

describe('spec 1 §6 rule 1: address ranges (ipaddr.js)', () => {
  test.each([
    ['127.0.0.1', 'loopback'], ['10.0.0.1', 'private'], ['172.31.255.1', 'private'], ['192.168.1.1', 'private'], ['169.254.1.1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'], ['0.0.0.0', 'unspecified'], ['224.0.0.251', 'multicast'], ['255.255.255.255', 'broadcast'], ['192.0.2.1', 'reserved'],
    ['240.0.0.1', 'reserved'], ['::1', 'loopback'], ['::', 'unspecified'], ['fc00::1', 'uniqueLocal'], ['fe80::1', 'linkLocal'], ['ff02::1', 'multicast'],
    ['::ffff:10.0.0.1', 'ipv4Mapped'], ['::ffff:8.8.8.8', 'ipv4Mapped'], ['64:ff9b::a00:1', 'rfc6052'], ['2002:a00:1::', '6to4'], ['2001:db8::1', 'reserved'],
  ])('%s is not public (%s)', (address, range) => {
    expect(refusedRange(address, STRICT)).toBe(range);
    expect(refusedRange(address, LOCAL)).toBeUndefined();
  });

  test.each([['93.184.216.34'], ['8.8.8.8'], ['2606:4700:4700::1111']])('%s is public', (address) => {
    expect(refusedRange(address, STRICT)).toBeUndefined();
  });

  test.each([['169.254.169.254'], ['fd00:ec2::254'], ['fd00:ec2:0::254']])('the metadata endpoint %s is refused under every policy', (address) => {
    expect(refusedRange(address, STRICT)).toBe('cloud metadata endpoint');
    expect(refusedRange(address, LOCAL)).toBe('cloud metadata endpoint');
  });
});

describe('spec 1 §6 rule 1: webhook URLs (checkWebhookUrl)', () => {
  const refused = (text: string, policy = STRICT): string => {
    try {
      checkWebhookUrl(text, policy);
    } catch (err) {
      if (err instanceof WebhookTargetRefusedError) return err.reason;
      throw err;
    }
    throw new Error(`${text} was not refused`);
  };

  test('https with a host name passes (resolved later); http:// only when private targets are allowed', () => {
    expect(checkWebhookUrl('https://hooks.example.com/dlr', STRICT)).toMatchObject({ hostname: 'hooks.example.com', literal: false });
    expect(refused('http://hooks.example.com/dlr')).toMatch(/must use https.*WEBHOOK_ALLOW_PRIVATE_TARGETS=true/);
    expect(checkWebhookUrl('http://127.0.0.1:9000/dlr', LOCAL)).toMatchObject({ hostname: '127.0.0.1', literal: true });
  });

  test('other schemes, non-URLs and URLs over 2000 characters are refused under every policy', () => {
    expect(refused('ftp://example.com/', LOCAL)).toMatch(/scheme ftp: is not https/);
    expect(refused('file:///etc/passwd', LOCAL)).toMatch(/scheme file:/);
    expect(refused('not a url', LOCAL)).toBe('not an absolute URL');
    expect(refused(`https://example.com/${'a'.repeat(2000)}`, LOCAL)).toMatch(/longer than 2000/);
  });

  test('IP literal hosts, in every spelling the URL parser normalises, are checked', () => {
    expect(refused('https://127.0.0.1/')).toMatch(/127\.0\.0\.1 is not a public address \(loopback\)/);
    expect(refused('https://2130706433/')).toMatch(/loopback/);
    expect(refused('https://0x7f.1/')).toMatch(/loopback/);
    expect(refused('https://[::ffff:7f00:1]/')).toMatch(/ipv4Mapped/);
    expect(refused('https://[fd00:ec2::254]/', LOCAL)).toMatch(/cloud metadata endpoint/);
    expect(checkWebhookUrl('https://8.8.8.8/dlr', STRICT)).toMatchObject({ literal: true });
  });
});

describe('spec 1 §6 rule 1: host names at set time and at connection time (infra/webhook-target.ts)', () => {
  test('set time: every resolved address must be public; a name that does not resolve is refused', async () => {
    const resolver = resolverOf({ 'hooks.example.test': ['93.184.216.34', '2606:2800:220:1::1'], 'mixed.example.test': ['93.184.216.34', '10.0.0.1'], 'localhost': ['127.0.0.1', '::1'] });
    await expect(checkWebhookTarget('https://hooks.example.test/dlr', STRICT, resolver)).resolves.toMatchObject({ hostname: 'hooks.example.test' });
    await expect(checkWebhookTarget('https://mixed.example.test/dlr', STRICT, resolver)).rejects.toThrow(/resolves to a non-public address \(private\)/);
    await expect(checkWebhookTarget('https://localhost/dlr', STRICT, resolver)).rejects.toThrow(/resolves to a non-public address \(loopback\)/);
    await expect(checkWebhookTarget('https://nowhere.example.test/dlr', STRICT, resolver)).rejects.toThrow(/cannot be resolved/);
    await expect(checkWebhookTarget('http://localhost:9000/dlr', LOCAL, resolver)).resolves.toMatchObject({ literal: false });
  });

  test('the connection lookup resolves once and hands the socket exactly the checked addresses', async () => {
    const resolver = resolverOf({ 'hooks.example.test': ['93.184.216.34', '2606:2800:220:1::1'] });
    const lookup = checkedLookup(STRICT, resolver);
    const all = await new Promise<unknown>((resolve, reject) => lookup('hooks.example.test', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
    expect(all).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }]);
    const one = await new Promise<unknown>((resolve, reject) => lookup('hooks.example.test', {}, (err, address, family) => (err ? reject(err) : resolve([address, family]))));
    expect(one).toEqual(['93.184.216.34', 4]);
    expect(resolver.calls).toBe(2);
  });

  test('a name that resolves to a public address for one lookup and a private one for the next (rebinding) is refused at the connection', async () => {
    let call = 0;
    const rebinding: Resolver = async () => [{ address: (call++ === 0 ? '93.184.216.34' : '127.0.0.1'), family: 4 }];
    await expect(checkWebhookTarget('https://rebind.example.test/dlr', STRICT, rebinding)).resolves.toBeDefined();
    const lookup = checkedLookup(STRICT, rebinding);
    await expect(new Promise((resolve, reject) => lookup('rebind.example.test', { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))))).rejects.toBeInstanceOf(WebhookTargetRefusedError);
  });
});

describe('settings: WEBHOOK_ALLOW_PRIVATE_TARGETS and TRUST_PROXY', () => {
  test('private webhook targets are refused by default; WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows them', () => {
    expect(loadConfig({}).lifecycle.webhook.allowPrivateTargets).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).lifecycle.webhook.allowPrivateTargets).toBe(true);
  });

  test('TRUST_PROXY is off by default; false, true, a hop count or a list of addresses, CIDRs and named ranges', () => {
    expect(loadConfig({}).http.trustProxy).toBe(false);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('2')).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8, 192.168.1.7, fd00::/8' }).http.trustProxy).toEqual(['loopback', '10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(() => loadConfig({ TRUST_PROXY: 'loopback, proxy.internal' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33' })).toThrow(/TRUST_PROXY: "10\.0\.0\.0\/33"/);
  });
});
