// main.ts refuses to start with a message naming what to fix, and a non-zero exit code (a
// process manager restarts on it), before any engine is spawned.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

function runMain(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'startup-errors-'));
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'main.ts')], {
    cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'fatal', ...env }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
  return new Promise((resolve) => child.once('exit', (code) => {
    rmSync(dataDir, { recursive: true, force: true });
    resolve({ code, stderr });
  }));
}

describe('start-up errors (main.ts)', () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', () => resolve()));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  test('the HTTP port taken by another process: exit 1, the message names HTTP_PORT', async () => {
    const { code, stderr } = await runMain({ HTTP_PORT: String(port) });
    expect(code).toBe(1);
    expect(stderr).toContain(`start-up failed: port ${port} (HTTP) is already in use: stop the other process (another \`npm start\`?) or set HTTP_PORT`);
  });

  test('the SMPP port taken: the message names SMPP_PORT', async () => {
    const { code, stderr } = await runMain({ HTTP_PORT: '0', SMPP_PORT: String(port) });
    expect(code).toBe(1);
    expect(stderr).toContain('or set SMPP_PORT');
  });

  test('a PROCESS_LAYOUT that is neither split nor single: exit 2, the message names both', async () => {
    const { code, stderr } = await runMain({ PROCESS_LAYOUT: 'threads' });
    expect(code).toBe(2);
    expect(stderr).toContain('PROCESS_LAYOUT must be "split" or "single", got "threads"');
  });
});
