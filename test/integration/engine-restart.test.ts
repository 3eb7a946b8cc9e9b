// Restarts of `npm start`'s embedded engines (infra/supervisor.ts with infra/restart-policy.ts;
// docs/operations.md "Restarts"; DESIGN §4: nothing accepted is lost). First the supervisor with
// a real nats-server on a free port: an engine killed with -9 after it was ready is started again
// on the same port and JetStream store (a stream's message is still there), /health's reason
// names the restart while it is down, one that cannot come back (its port taken) is given up on
// after the policy's restarts, naming it and what to check, and an orderly stop starts nothing.
// Then the product as `npm start` runs it (main.ts, every role, its own engines, the lifecycle and
// carrier role processes) in a data directory of its own: kill -9 of nats-server, then of the
// Temporal dev server, then of the lifecycle role process; each comes back, the product's clients
// reconnect, and messages accepted before, during and after reach delivered; a SIGTERM then
// starts nothing again. Last, the give-up: an engine that cannot come back stops npm start.
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../infra/logger';
import { freePort, natsServerSpec } from '../../infra/local-engines';
import { ChildGaveUpError, Supervisor, portOpen, processRunning } from '../../infra/supervisor';
import { apiRequest, killRecorded, npmStartEnv, recordedPid, startNpmStart, stopNpmStart, type NpmStart } from '../support/npm-start';
import type { DemoCredentials } from '../../pipelines/demo-seed';
import { clockPast, eventually } from '../../support/eventually';

const V1 = '/transactional/v1';
const log = createLogger('fatal');

let dir: string;
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'sms-engine-restart-')); });
afterAll(() => { rmSync(dir, { recursive: true, force: true }); });

/** Listens on 127.0.0.1:`port` once it is free (the killed engine's socket closes as it dies). */
async function holdPort(port: number): Promise<Server> {
  return eventually(() => new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  }), { what: `port ${port} free to hold`, timeoutMs: 5_000, intervalMs: 5 });
}

describe('the supervisor with a restart policy (real nats-server)', () => {
  const restart = { initialDelayMs: 200, maxDelayMs: 400, stableMs: 60_000, giveUpAfter: 2 };

  test('kill -9 after ready: started again on its port and store, the stream message kept; /health reason while down; stopAll restarts nothing', async () => {
    const dataDir = join(dir, 'sup-restart');
    const port = await freePort();
    const supervisor = new Supervisor(dataDir, log, { restart });
    try {
      await supervisor.start(natsServerSpec({ storeDir: join(dataDir, 'nats'), port }));
      const nc = await connect({ servers: `nats://127.0.0.1:${port}`, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
      try {
        await (await jetstreamManager(nc)).streams.add({ name: 'RESTART_TEST', subjects: ['restart.test'] });
        await jetstream(nc).publish('restart.test', 'kept');
        const first = supervisor.pid('nats-server') as number;
        process.kill(first, 'SIGKILL');
        const why = await eventually(() => supervisor.whyDown('nats-server'), { what: 'the reason while it is down', until: (w) => w !== undefined, timeoutMs: 2_000, intervalMs: 5 });
        expect(why).toMatch(/^the embedded nats-server exited \(SIGKILL\) \d+ s ago; restart 1 of 2 (in \d+\.\d s|under way)$/);
        await eventually(() => { const pid = supervisor.pid('nats-server'); return pid !== undefined && pid !== first && supervisor.whyDown('nats-server') === undefined; }, { what: 'nats-server started again', timeoutMs: 20_000 });
        expect(recordedPid(dataDir, 'nats-server')).toBe(supervisor.pid('nats-server'));
        // The client reconnects by itself; the JetStream store was reused.
        const info = await eventually(async () => (await jetstreamManager(nc)).streams.info('RESTART_TEST'), { what: 'the stream after the restart', timeoutMs: 20_000, intervalMs: 100 });
        expect(info.state.messages).toBe(1);
        expect(processRunning(first)).toBe(false);
      } finally {
        await nc.close();
      }

      const last = supervisor.pid('nats-server') as number;
      await supervisor.stopAll();
      const stoppedAt = Date.now();
      expect(processRunning(last)).toBe(false);
      // Past several of the policy's delays: nothing was started again.
      await clockPast(stoppedAt + 5 * restart.maxDelayMs);
      expect({ pid: supervisor.pid('nats-server'), listening: await portOpen(port), recorded: recordedPid(dataDir, 'nats-server') })
        .toEqual({ pid: undefined, listening: false, recorded: undefined });
    } finally {
      await supervisor.stopAll();
    }
  }, 60_000);

  test('an engine that cannot come back (its port taken) is given up on after giveUpAfter restarts, naming it and what to check; the others are stopped', async () => {
    const dataDir = join(dir, 'sup-give-up');
    const port = await freePort();
    const otherPort = await freePort();
    const gaveUp: ChildGaveUpError[] = [];
    const supervisor = new Supervisor(dataDir, log, { restart, onGiveUp: (err) => gaveUp.push(err) });
    let held: Server | undefined;
    try {
      // A second child under the same supervisor, named apart: stopped on the give-up.
      await supervisor.start({ ...natsServerSpec({ storeDir: join(dataDir, 'other'), port: otherPort }), name: 'other-nats' });
      await supervisor.start(natsServerSpec({ storeDir: join(dataDir, 'nats'), port }));
      const first = supervisor.pid('nats-server') as number;
      const other = supervisor.pid('other-nats') as number;
      process.kill(first, 'SIGKILL');
      held = await holdPort(port);
      await eventually(() => gaveUp.length, { what: 'the give-up', until: (n) => n > 0, timeoutMs: 30_000, intervalMs: 20 });
      expect(gaveUp).toHaveLength(1);
      expect(gaveUp[0]?.name).toBe('ChildGaveUpError');
      expect(gaveUp[0]?.message).toContain('the embedded nats-server keeps exiting: it was started again 2 times in a row and exited each time within 60 s');
      expect(gaveUp[0]?.message).toContain(`Check that port ${port} is free (NATS_PORT), and that its JetStream store ${join(dataDir, 'nats')} is readable and its disk not full.`);
      // The other engine was stopped before the owner was told; the held port was never taken over.
      expect({ other: processRunning(other), otherListening: await portOpen(otherPort) }).toEqual({ other: false, otherListening: false });
      expect(supervisor.pid('nats-server')).toBeUndefined();
    } finally {
      held?.close();
      await supervisor.stopAll();
    }
  }, 60_000);
});

// ---- the product as npm start runs it ----

describe('npm start: a crashed engine comes back and nothing accepted is lost', () => {
  let env: NodeJS.ProcessEnv;
  let httpUrl: string;
  let productDir: string;
  const products: NpmStart[] = [];

  /** The environment of `npm start` in `dataDir` (test/support/npm-start.ts), logging at info; its HTTP URL. */
  function productEnv(dataDir: string, extra: Record<string, string> = {}): Promise<{ env: NodeJS.ProcessEnv; httpUrl: string }> {
    // The test machine is shared: the lifecycle at the gateways' priority.
    return npmStartEnv(dataDir, { LOG_LEVEL: 'info', BACKGROUND_NICE: '0', ...extra });
  }

  beforeAll(async () => {
    productDir = join(dir, 'product');
    ({ env, httpUrl } = await productEnv(productDir));
  });

  afterAll(async () => {
    for (const running of products) {
      // ENGINE_RESTART_LOG=<file>: the product's output, to read after a failure.
      if (process.env['ENGINE_RESTART_LOG']) (await import('node:fs')).appendFileSync(process.env['ENGINE_RESTART_LOG'], running.output.join(''));
      await stopNpmStart(running);
    }
    // Whatever a failed run left recorded (an engine, a role process) goes with its directory.
    for (const dataDir of new Set(products.map((p) => p.dataDir))) killRecorded(dataDir);
  }, 60_000);

  function start(productEnvironment: NodeJS.ProcessEnv = env): NpmStart {
    const product = startNpmStart(productEnvironment);
    products.push(product);
    return product;
  }

  /** Its start-up finished (the banner): engines are killed after it, as in production. */
  async function started(product: NpmStart, dataDir: string): Promise<void> {
    await eventually(() => {
      if (product.child.exitCode !== null) throw new Error(`the product exited with code ${product.child.exitCode} during start-up:\n${product.output.join('').slice(-4000)}`);
      return product.output.join('').includes('sms-platform ready in') && existsSync(join(dataDir, 'demo.json'));
    }, { what: 'the start banner and the demo organization (demo.json)', timeoutMs: 150_000, intervalMs: 100 });
  }

  function request(path: string, token: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    return apiRequest(httpUrl, path, token, body);
  }

  async function send(token: string, label: string, n: number): Promise<string> {
    const res = await request(`${V1}/sms`, token, { from: 'Restart', to: `+49151123457${String(10 + n)}`, text: `${label} ${n}` });
    expect({ label, status: res.status, body: res.status === 201 ? {} : res.body }).toEqual({ label, status: 201, body: {} });
    return (res.body['entity'] as { id: string }).id;
  }

  async function allDelivered(token: string, ids: readonly string[], what: string): Promise<void> {
    await eventually(async () => {
      const statuses: unknown[] = [];
      for (const id of ids) {
        const res = await request(`${V1}/sms/${id}`, token);
        statuses.push(res.status === 200 ? (res.body['entity'] as { status: string }).status : res.status);
      }
      expect(statuses).toEqual(ids.map(() => 'delivered'));
    }, { what, timeoutMs: 120_000, intervalMs: 250 });
  }

  /** Kills the engine `name` (its process group) with -9; resolves with the killed pid once it is gone. */
  async function killEngine(name: string): Promise<number> {
    const before = recordedPid(productDir, name) as number;
    expect(processRunning(before)).toBe(true);
    process.kill(-before, 'SIGKILL');
    await eventually(() => !processRunning(before), { what: `${name} (pid ${before}) gone`, timeoutMs: 10_000, intervalMs: 10 });
    return before;
  }

  /**
   * A GET /health started while the engine `name` is down answers 503 with the supervisor's
   * reason. Started every 20 ms without waiting for the one before: a request that came in just
   * before the engine's exit waits out its probe's 2 s timeout, longer than a restart may take.
   */
  async function healthWhileDown(name: string): Promise<{ status: number; error: string }> {
    const engine = name === 'nats-server' ? 'nats' : name;
    const reason = new RegExp(`^the embedded ${name} exited \\(SIGKILL\\) \\d+ s ago; restart 1 of 8 `);
    const answers: Array<Promise<{ status: number; error: string } | undefined>> = [];
    let found: { status: number; error: string } | undefined;
    const deadline = Date.now() + 20_000;
    while (!found && Date.now() < deadline) {
      answers.push(fetch(`${httpUrl}/health`, { signal: AbortSignal.timeout(5_000) }).then(async (res) => {
        const body = (await res.json()) as { engines: Record<string, { error?: string }> };
        const answer = { status: res.status, error: body.engines[engine]?.error ?? '' };
        if (reason.test(answer.error)) found = answer;
        return answer;
      }, () => undefined));
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const all = await Promise.all(answers);
    expect({ name, found: found ?? all.filter((a) => a?.status !== 200).slice(0, 3) }).toEqual({ name, found: { status: 503, error: expect.stringMatching(reason) as unknown } });
    return found as { status: number; error: string };
  }

  /** Waits for the engine `name` under a new pid and /health 200; resolves with the new pid. */
  async function healthyAgain(name: string, before: number): Promise<number> {
    const after = await eventually(() => recordedPid(productDir, name), { what: `${name} started again under a new pid`, until: (pid) => pid !== undefined && pid !== before && processRunning(pid), timeoutMs: 120_000, intervalMs: 100 });
    await eventually(async () => (await fetch(`${httpUrl}/health`, { signal: AbortSignal.timeout(5_000) })).status, { what: `/health 200 after the ${name} restart`, until: (s) => s === 200, timeoutMs: 120_000, intervalMs: 250 });
    return after as number;
  }

  test('DESIGN §4: kill -9 of nats-server, of the Temporal dev server, of the lifecycle process: each is started again (logged), /health names the restart while down, every message accepted before, during and after is delivered; SIGTERM then restarts nothing', async () => {
    const running = start();
    await started(running, productDir);
    const demo = JSON.parse(readFileSync(join(productDir, 'demo.json'), 'utf8')) as DemoCredentials;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await send(demo.token, 'before', i));

    // nats-server.
    const nats = await killEngine('nats-server');
    await healthWhileDown('nats-server');
    const natsAfter = await healthyAgain('nats-server', nats);
    expect(running.child.exitCode).toBeNull();
    const natsLines = running.events.filter((e) => e['child'] === 'nats-server').map((e) => e['msg']);
    expect(natsLines).toContain('engine exited unexpectedly; starting it again');
    expect(natsLines).toContain('engine started again');
    const natsExit = running.events.find((e) => e['child'] === 'nats-server' && e['msg'] === 'engine exited unexpectedly; starting it again');
    expect(natsExit).toMatchObject({ level: 50, signal: 'SIGKILL', restart: { attempt: 1, of: 8, inMs: 500 } });
    expect(running.events.find((e) => e['child'] === 'nats-server' && e['msg'] === 'engine started again')).toMatchObject({ pid: natsAfter, attempt: 1 });
    for (let i = 0; i < 3; i++) ids.push(await eventually(() => send(demo.token, 'after nats', i), { what: `a POST /sms accepted after the nats-server restart (${i})`, timeoutMs: 60_000, intervalMs: 250 }));
    await allDelivered(demo.token, ids, 'every message accepted before and after the nats-server restart delivered');

    // The Temporal dev server: slower to come back, so /health shows it down with the reason.
    const temporal = await killEngine('temporal');
    // Accepted while Temporal is down (sent beside the /health requests that see it down): the 201 does not wait for it.
    const [health, during] = await Promise.all([healthWhileDown('temporal'), send(demo.token, 'during temporal', 0)]);
    expect(health.status).toBe(503);
    ids.push(during);
    await healthyAgain('temporal', temporal);
    expect(running.events.find((e) => e['child'] === 'temporal' && e['msg'] === 'engine exited unexpectedly; starting it again')).toMatchObject({ signal: 'SIGKILL', restart: { attempt: 1 } });
    for (let i = 0; i < 2; i++) ids.push(await send(demo.token, 'after temporal', i));
    await allDelivered(demo.token, ids, 'every message accepted before, during and after the Temporal restart delivered');

    // A role process killed with -9 (lifecycle: the Temporal worker and the JetStream bridges) is started again too.
    const lifecycle = recordedPid(productDir, 'role-lifecycle') as number;
    const inFlight = await send(demo.token, 'before the lifecycle kill', 0);
    process.kill(lifecycle, 'SIGKILL');
    ids.push(inFlight, await send(demo.token, 'lifecycle down', 0));
    await eventually(() => recordedPid(productDir, 'role-lifecycle'), { what: 'the lifecycle process started again', until: (pid) => pid !== undefined && pid !== lifecycle && processRunning(pid), timeoutMs: 60_000, intervalMs: 100 });
    expect(running.events.find((e) => e['process'] === 'lifecycle' && e['msg'] === 'role process exited; starting it again')).toMatchObject({ level: 50, signal: 'SIGKILL', restart: { attempt: 1, of: 8, inMs: 500 } });
    ids.push(await send(demo.token, 'after the lifecycle restart', 0));
    await allDelivered(demo.token, ids, 'every message accepted around the lifecycle process restart delivered');
    expect(running.child.exitCode).toBeNull();

    // An orderly stop (SIGTERM) starts nothing again: exit code 0, no restart logged while stopping, every process gone.
    const restarting = (): number => running.events.filter((e) => String(e['msg']).endsWith('starting it again')).length;
    const before = restarting();
    const left = ['nats-server', 'temporal', 'role-lifecycle', 'role-carrier'].map((name) => recordedPid(productDir, name) as number);
    running.child.kill('SIGTERM');
    const code = await eventually(() => running.child.exitCode, { what: 'npm start to exit after SIGTERM', until: (c) => c !== null, timeoutMs: 30_000, intervalMs: 100 });
    expect({ code, restartsLogged: restarting() - before }).toEqual({ code: 0, restartsLogged: 0 });
    await eventually(() => left.filter((pid) => processRunning(pid)), { what: 'every engine and role process gone', until: (l) => l.length === 0, timeoutMs: 10_000, intervalMs: 100 });
  }, 600_000);

  test('a nats-server that cannot come back (its port taken) stops npm start: exit code 1, naming it and what to check, nothing left running', async () => {
    const dataDir = join(dir, 'give-up');
    const { env: giveUpEnv } = await productEnv(dataDir, { RESTART_GIVE_UP_AFTER: '1' });
    const running = start(giveUpEnv);
    await started(running, dataDir);
    const recorded = ['nats-server', 'temporal', 'role-lifecycle', 'role-carrier'].map((name) => ({ name, pid: recordedPid(dataDir, name) as number }));
    expect(recorded.filter((r) => !processRunning(r.pid))).toEqual([]);
    const natsPort = Number(giveUpEnv['NATS_PORT']);
    process.kill(-(recorded[0] as { pid: number }).pid, 'SIGKILL');
    const held = await holdPort(natsPort);
    try {
      const code = await eventually(() => running.child.exitCode, { what: 'npm start to exit', until: (c) => c !== null, timeoutMs: 60_000, intervalMs: 100 });
      const output = running.output.join('');
      expect({ code, gaveUp: output.includes('the embedded nats-server keeps exiting: it was started again 1 time in a row') }).toEqual({ code: 1, gaveUp: true });
      expect(output).toContain(`Check that port ${natsPort} is free (NATS_PORT), and that its JetStream store ${join(dataDir, 'nats')} is readable and its disk not full.`);
      expect(running.events.find((e) => e['child'] === 'nats-server' && e['level'] === 60)).toMatchObject({ restarts: 1 });
      await eventually(() => recorded.filter((r) => processRunning(r.pid)), { what: 'every engine and role process of the stack gone', until: (left) => left.length === 0, timeoutMs: 20_000, intervalMs: 100 });
    } finally {
      held.close();
    }
  }, 300_000);
});
