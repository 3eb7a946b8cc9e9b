// The runtime file of a running stack ($DATA_DIR/run/stack.json, infra/stack-file.ts) and how
// the admin CLI picks its stack from it: the runtime file of its DATA_DIR, NATS_URL over it,
// the default ports (said so) without either. The writer's removal on exit and a stale file
// are checked on real child processes; the CLI itself in test/integration/stack-file.test.ts.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localUrl, readStackFile, resolveStackTarget, stackFilePath, stackRunning, webhookPolicyFor, type StackRecord, type StackTargetInput } from '../../infra/stack-file';

const ROOT = join(__dirname, '..', '..');
const defaults = { natsUrl: 'nats://127.0.0.1:4222', temporalAddress: '127.0.0.1:7233', temporalUi: 'http://127.0.0.1:8233' };
const record: StackRecord = {
  pid: 4242, startedAt: '2025-11-26T10:00:00.000Z', dataDir: '/srv/stack-b', roles: ['gateway-http', 'worker'],
  natsUrl: 'nats://127.0.0.1:5222', temporalAddress: '127.0.0.1:8233', temporalUi: 'http://127.0.0.1:9233', httpUrl: 'http://localhost:9080',
};
const input = (over: Partial<StackTargetInput>): StackTargetInput => ({
  natsUrl: undefined, temporalAddress: undefined, dataDir: '/srv/stack-b', defaults, record: undefined, alive: () => true, ...over,
});

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'stack-file-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('resolveStackTarget: which stack the admin CLI talks to', () => {
  test('runtime file present (its process running): its NATS URL, Temporal address and UI, named on one line', () => {
    const target = resolveStackTarget(input({ record }));
    expect(target).toMatchObject({ natsUrl: 'nats://127.0.0.1:5222', temporalAddress: '127.0.0.1:8233', temporalUi: 'http://127.0.0.1:9233' });
    expect(target.description).toBe('stack of /srv/stack-b (pid 4242; /srv/stack-b/run/stack.json): NATS nats://127.0.0.1:5222, Temporal 127.0.0.1:8233');
    expect(target.description).not.toContain('\n');
  });

  test('runtime file present but its process gone (kill -9): still its URLs, never the default ports, and said to be stale', () => {
    const target = resolveStackTarget(input({ record, alive: () => false }));
    expect(target.natsUrl).toBe('nats://127.0.0.1:5222');
    expect(target.description).toContain('pid 4242 is not running: stale runtime file');
  });

  test('runtime file absent, no NATS_URL: the default ports as before, said so', () => {
    const target = resolveStackTarget(input({}));
    expect(target).toMatchObject(defaults);
    expect(target.description).toBe('no running stack recorded for /srv/stack-b (/srv/stack-b/run/stack.json is absent): trying the default NATS nats://127.0.0.1:4222, Temporal 127.0.0.1:7233');
  });

  test('NATS_URL overrides the runtime file (its Temporal address still comes from the file); TEMPORAL_ADDRESS overrides too', () => {
    const natsOnly = resolveStackTarget(input({ record, natsUrl: 'nats://10.0.0.1:4222' }));
    expect(natsOnly).toMatchObject({ natsUrl: 'nats://10.0.0.1:4222', temporalAddress: '127.0.0.1:8233' });
    expect(natsOnly.description).toContain('(NATS_URL from the environment)');
    const both = resolveStackTarget(input({ record, natsUrl: 'nats://10.0.0.1:4222', temporalAddress: '10.0.0.2:7233' }));
    expect(both).toMatchObject({ natsUrl: 'nats://10.0.0.1:4222', temporalAddress: '10.0.0.2:7233' });
    expect(both.description).toContain('(NATS_URL and TEMPORAL_ADDRESS from the environment)');
  });

  test('NATS_URL without a runtime file: NATS_URL, and no claim about a default', () => {
    const target = resolveStackTarget(input({ natsUrl: 'nats://n1:4222,nats://n2:4222' }));
    expect(target).toMatchObject({ natsUrl: 'nats://n1:4222,nats://n2:4222', temporalAddress: defaults.temporalAddress });
    expect(target.description).toBe('NATS nats://n1:4222,nats://n2:4222, Temporal 127.0.0.1:7233 (NATS_URL from the environment)');
  });
});

describe('readStackFile', () => {
  test('absent, not JSON, or without the URLs: undefined (treated as no runtime file)', () => {
    expect(readStackFile(dir)).toBeUndefined();
    mkdirSync(join(dir, 'run'));
    writeFileSync(stackFilePath(dir), '{ half');
    expect(readStackFile(dir)).toBeUndefined();
    writeFileSync(stackFilePath(dir), JSON.stringify({ pid: 1 }));
    expect(readStackFile(dir)).toBeUndefined();
    writeFileSync(stackFilePath(dir), JSON.stringify(record));
    expect(readStackFile(dir)).toEqual(record);
  });

  test('localUrl: wildcard addresses become localhost, IPv6 literals get brackets', () => {
    expect(localUrl('http', '0.0.0.0', 8080)).toBe('http://localhost:8080');
    expect(localUrl('http', '::', 8080)).toBe('http://localhost:8080');
    expect(localUrl('http', '127.0.0.1', 8080)).toBe('http://127.0.0.1:8080');
    expect(localUrl('http', '::1', 8080)).toBe('http://[::1]:8080');
  });
});

describe('writeStackFile in a real process', () => {
  /** Runs a node process that writes the runtime file of `dir`, sets up `then` (its signal handlers), then says so. */
  function writer(then: string): { child: ReturnType<typeof spawn>; written: Promise<void>; exited: Promise<number | null> } {
    const script = [
      "const { writeStackFile } = require('./infra/stack-file');",
      `writeStackFile({ dataDir: ${JSON.stringify(dir)}, roles: ['gateway-http'], natsUrl: 'nats://127.0.0.1:5222', temporalAddress: '127.0.0.1:8233', httpUrl: 'http://localhost:9080' });`,
      then,
      "process.stdout.write('written\\n');",
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
    const written = new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => { if (chunk.toString().includes('written')) resolve(); });
      child.once('exit', (code) => reject(new Error(`writer exited (${code}) before writing`)));
    });
    written.catch(() => undefined);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, written, exited };
  }

  test('written with the writer\'s pid and URLs; removed when the process exits', async () => {
    const { child, written, exited } = writer('setInterval(() => undefined, 1000); process.on("SIGTERM", () => process.exit(0));');
    await written;
    const found = readStackFile(dir);
    expect(found).toMatchObject({ pid: child.pid, dataDir: dir, natsUrl: 'nats://127.0.0.1:5222', temporalAddress: '127.0.0.1:8233', httpUrl: 'http://localhost:9080', roles: ['gateway-http'] });
    expect(found?.startTime).toMatch(/^\d+$/);
    expect(stackRunning(found as StackRecord)).toBe(true);
    // The same pid with another start time is another process that got the pid since: stale.
    expect(stackRunning({ ...(found as StackRecord), startTime: '1' })).toBe(false);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(stackFilePath(dir))).toBe(false);
  }, 30_000);

  test('a writer killed with -9 leaves the file behind; the resolver calls it stale and keeps its URLs', async () => {
    const { child, written, exited } = writer('setInterval(() => undefined, 1000);');
    await written;
    child.kill('SIGKILL');
    await exited;
    const left = readStackFile(dir);
    expect(left?.pid).toBe(child.pid);
    const target = resolveStackTarget(input({ dataDir: dir, record: left, alive: stackRunning }));
    expect(target.natsUrl).toBe('nats://127.0.0.1:5222');
    expect(target.description).toContain(`pid ${child.pid} is not running: stale runtime file`);
  }, 30_000);

  test('a process exiting does not remove a runtime file another process wrote since', async () => {
    const { written, exited } = writer(`require('fs').writeFileSync(${JSON.stringify(stackFilePath(dir))}, JSON.stringify(${JSON.stringify({ ...record, pid: process.pid })}));`);
    await written;
    expect(await exited).toBe(0);
    expect(JSON.parse(readFileSync(stackFilePath(dir), 'utf8'))).toMatchObject({ pid: process.pid });
  }, 30_000);
});

describe('webhookPolicyFor: the webhook target rule a tool applies (spec 1 §6 rule 1)', () => {
  test('unset in the tool environment: the running stack decides (its runtime file)', () => {
    expect(webhookPolicyFor(undefined, false, { ...record, webhookAllowPrivateTargets: true })).toBe(true);
    expect(webhookPolicyFor(undefined, false, { ...record, webhookAllowPrivateTargets: false })).toBe(false);
  });

  test('no runtime file, or one written before the field existed: strict', () => {
    expect(webhookPolicyFor(undefined, false, undefined)).toBe(false);
    expect(webhookPolicyFor(undefined, false, record)).toBe(false);
  });

  test('set in the tool environment: it wins over the stack, both ways', () => {
    expect(webhookPolicyFor('true', true, { ...record, webhookAllowPrivateTargets: false })).toBe(true);
    expect(webhookPolicyFor('false', false, { ...record, webhookAllowPrivateTargets: true })).toBe(false);
  });
});
