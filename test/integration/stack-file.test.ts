// The stack's runtime file ($DATA_DIR/run/stack.json, infra/stack-file.ts) as the product
// writes it at start, and the admin CLI finding the stack of its DATA_DIR through it, with no
// NATS_URL set and the default port pointing nowhere (before the runtime file, the CLI went
// to nats://127.0.0.1:4222 whatever stack ran there).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readStackFile, stackFilePath, stackRunning, type StackRecord } from '../../infra/stack-file';
import { freePort } from '../../infra/local-engines';
import { stack } from '../../support/stack';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/** `npm run admin -- ... --json` with DATA_DIR given, NATS_URL and TEMPORAL_ADDRESS unset, NATS_PORT on a closed port. */
async function adminOf(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { NATS_URL: _n, TEMPORAL_ADDRESS: _t, ...env } = process.env;
  const closed = String(await freePort());
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'admin', '--', ...args, '--json'], { cwd: ROOT, env: { ...env, DATA_DIR: dataDir, NATS_PORT: closed } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('$DATA_DIR/run/stack.json', () => {
  test('written by the running product: its pid, the NATS URL and Temporal address it uses, its HTTP URL', () => {
    const { productDataDir } = stack();
    const record = readStackFile(productDataDir);
    expect(record).toMatchObject({ dataDir: productDataDir, natsUrl: stack().productEnv['NATS_URL'], temporalAddress: stack().productEnv['TEMPORAL_ADDRESS'] });
    // The host part follows HTTP_HOST (a wildcard address is written as localhost).
    expect(new URL(record?.httpUrl ?? 'http://none').port).toBe(new URL(stack().httpUrl).port);
    expect(stackRunning(record as StackRecord)).toBe(true);
  });

  test('admin CLI: finds the stack of its DATA_DIR without NATS_URL, names it in one stderr line, stdout stays JSON', async () => {
    const { productDataDir } = stack();
    const record = readStackFile(productDataDir);
    const result = await adminOf(productDataDir, 'org', 'list');
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(Array.isArray(JSON.parse(result.stdout))).toBe(true);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toEqual([`admin: stack of ${productDataDir} (pid ${record?.pid}; ${stackFilePath(productDataDir)}): NATS ${record?.natsUrl}, Temporal ${record?.temporalAddress}`]);
  }, 60_000);

  test('admin CLI: no runtime file and no NATS_URL: says it tries the default, and fails there (NATS_PORT) naming it', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'admin-no-stack-'));
    try {
      const result = await adminOf(empty, 'org', 'list');
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`admin: no running stack recorded for ${empty} (${stackFilePath(empty)} is absent): trying the default NATS nats://127.0.0.1:`);
      expect(result.stderr).toMatch(/admin: cannot reach NATS at nats:\/\/127\.0\.0\.1:\d+/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);
});
