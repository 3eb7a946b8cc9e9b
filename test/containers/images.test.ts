// The images of `npm run images` (scripts/images.mjs), each started with testcontainers as a user
// would start it: the product image alone runs the embedded stack (DESIGN §2: `npm start`'s
// default) and takes an SMS; the engine images are what the integration project's container
// path starts. Run by `npm run test:containers` (podman socket, TEST_CONTAINERS=1).
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Connection } from '@temporalio/client';
import { GenericContainer, Wait, getContainerRuntimeClient, type StartedTestContainer } from 'testcontainers';

jest.setTimeout(240_000);

const PLATFORM = 'localhost/sms-platform:latest';
const NATS = 'localhost/sms-nats:latest';
const TEMPORAL_DEV = 'localhost/sms-temporal-dev:latest';

async function execOk(container: StartedTestContainer, command: string[]): Promise<string> {
  const result = await container.exec(command);
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')} exited with ${result.exitCode}: ${result.output}`);
  return result.output;
}

/** The image's HEALTHCHECK command (CMD form), as the engine would run it. */
async function healthcheckOf(container: StartedTestContainer): Promise<string[]> {
  const client = await getContainerRuntimeClient();
  const info = await client.container.inspect(client.container.getById(container.getId()));
  const test = info.Config.Healthcheck?.Test ?? [];
  if (test[0] !== 'CMD') throw new Error(`unexpected health check ${JSON.stringify(test)}`);
  return test.slice(1);
}

describe(`${PLATFORM} alone: the embedded stack (npm start's default), data in /data`, () => {
  let product: StartedTestContainer;
  let url: string;

  beforeAll(async () => {
    product = await new GenericContainer(PLATFORM)
      .withExposedPorts(8080)
      .withWaitStrategy(Wait.forHttp('/health', 8080).forStatusCode(200))
      .withStartupTimeout(180_000)
      .start();
    url = `http://${product.getHost()}:${product.getMappedPort(8080)}`;
  });
  afterAll(async () => { await product?.stop(); });

  test('runs as the unprivileged user sms, with Node 24', async () => {
    expect((await execOk(product, ['id', '-un'])).trim()).toBe('sms');
    expect((await execOk(product, ['id', '-u'])).trim()).not.toBe('0');
    expect((await execOk(product, ['node', '--version'])).trim()).toMatch(/^v24\./);
  });

  test('/health answers 200, and the image\'s health check command passes inside the container', async () => {
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const check = await healthcheckOf(product);
    expect(check.join(' ')).toContain('/health');
    await execOk(product, check);
  });

  test('POST /transactional/v1/sms with the demo token of /data/demo.json (pipelines/demo-seed.ts) is accepted: 201', async () => {
    const demo = JSON.parse(await execOk(product, ['cat', '/data/demo.json'])) as { token: string };
    const res = await fetch(`${url}/transactional/v1/sms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'Image', to: '+4915112345678', text: 'Hello from the product image' }),
    });
    const body = (await res.json()) as { entity: { id: string; status: string } };
    expect(res.status).toBe(201);
    expect(body.entity).toMatchObject({ id: expect.any(String), status: 'queued' });
  });

  test('without a token the API answers 401 (the image serves the real product, not a stub)', async () => {
    const res = await fetch(`${url}/transactional/v1/sms`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(401);
  });
});

describe(`${NATS}`, () => {
  test('starts with JetStream (the default command), passes its health check and takes a stream', async () => {
    const nats = await new GenericContainer(NATS).withExposedPorts(4222).withWaitStrategy(Wait.forLogMessage(/Server is ready/)).start();
    try {
      await execOk(nats, await healthcheckOf(nats));
      const nc = await connect({ servers: `${nats.getHost()}:${nats.getMappedPort(4222)}` });
      try {
        const jsm = await jetstreamManager(nc);
        const info = await jsm.streams.add({ name: 'IMAGE_CHECK', subjects: ['image.check'] });
        expect(info.config.name).toBe('IMAGE_CHECK');
      } finally {
        await nc.close();
      }
    } finally {
      await nats.stop();
    }
  });
});

describe(`${TEMPORAL_DEV}`, () => {
  test('`temporal server start-dev` answers on 7233 with the default namespace', async () => {
    const temporal = await new GenericContainer(TEMPORAL_DEV).withExposedPorts(7233).withWaitStrategy(Wait.forListeningPorts()).start();
    try {
      const connection = await Connection.connect({ address: `${temporal.getHost()}:${temporal.getMappedPort(7233)}` });
      try {
        const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
        expect(ns.namespaceInfo?.name).toBe('default');
      } finally {
        await connection.close();
      }
    } finally {
      await temporal.stop();
    }
  });
});
