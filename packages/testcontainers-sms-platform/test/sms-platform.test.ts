// The README's example, run as written: the product image in a container (podman here, through
// its Docker-compatible socket), an organization provisioned over the admin API, an SMS sent
// with its token, and its DLRs received, signed, by a receiver in this test process.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { hostAddress, SmsPlatformContainer, type StartedSmsPlatformContainer } from '../src';

interface Dlr { id: string; status: string; raw: string; headers: Record<string, string> }

let platform: StartedSmsPlatformContainer;
let receiver: Server;
const dlrs: Dlr[] = [];
let arrived: () => void = () => undefined;

beforeAll(async () => {
  // The receiver listens on every interface: the container reaches it through the host's address.
  receiver = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => { raw += chunk.toString('utf8'); });
    req.on('end', () => {
      const body = JSON.parse(raw) as { id: string; status: string };
      dlrs.push({ id: body.id, status: body.status, raw, headers: req.headers as Record<string, string> });
      arrived();
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '0.0.0.0', resolve));
  platform = await new SmsPlatformContainer().withAdminToken().withPrivateWebhookTargets().withSimulatorLatency(50).start();
});

afterAll(async () => {
  await platform?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

/** Resolves once `condition` holds over the DLRs received (checked on each arrival), or fails after `ms`. */
function until(condition: () => boolean, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`DLRs received so far: ${JSON.stringify(dlrs.map((d) => [d.id, d.status]))}`)), ms);
    arrived = () => {
      if (condition()) {
        clearTimeout(timer);
        resolve();
      }
    };
    arrived();
  });
}

test('an SMS sent with a token made over the admin API is delivered, and its signed DLRs reach the test process', async () => {
  const port = (receiver.address() as AddressInfo).port;
  const org = await platform.createOrganization({ balance: 10, smsPrices: { DE: 0.04 }, webhookUrl: `http://${hostAddress()}:${port}/dlr` });

  const res = await fetch(`${platform.getBaseUrl()}/transactional/v1/sms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${org.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ from: 'MyApp', to: '+4915112345678', text: 'Your code is 123456' }),
  });
  expect(res.status).toBe(201);
  const { entity } = (await res.json()) as { entity: { id: string; status: string } };

  await until(() => dlrs.some((d) => d.id === entity.id && d.status === 'delivered'), 60_000);
  const mine = dlrs.filter((d) => d.id === entity.id);
  expect(mine.map((d) => d.status)).toEqual(['sent', 'buffered', 'delivered']);
  // Each DLR is signed per Standard Webhooks with the secret the admin API returned.
  const verifier = new Webhook(org.webhookSecret ?? '');
  for (const dlr of mine) expect(verifier.verify(dlr.raw, dlr.headers)).toMatchObject({ id: entity.id });
  expect(platform.getSmppPort()).toBeGreaterThan(0);
});
