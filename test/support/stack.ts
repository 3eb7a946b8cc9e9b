// What integration suites know about the running test stack, and helpers to reach it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { StackInfo } from '../../support/stack';

export type { StackInfo };

export function stack(): StackInfo {
  const file = process.env['STACK_FILE'];
  if (!file) throw new Error('STACK_FILE is not set: integration suites run under jest with test/support/global-setup.ts');
  return JSON.parse(readFileSync(file, 'utf8')) as StackInfo;
}

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/** Runs the admin CLI exactly as an operator would (`npm run admin -- ...`), with --json. */
export async function admin<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const { stdout } = await run('npm', ['run', '-s', 'admin', '--', ...args, '--json'], {
    cwd: ROOT,
    // As the test stack: webhook receivers on 127.0.0.1 over http (WEBHOOK_ALLOW_PRIVATE_TARGETS).
    env: { ...process.env, NATS_URL: stack().natsUrl, TEMPORAL_ADDRESS: stack().temporalAddress, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  });
  return JSON.parse(stdout) as T;
}

export async function api(path: string, init: { method?: string; token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Headers; body: unknown }> {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.token) headers['authorization'] = `Bearer ${init.token}`;
  let body: string | undefined = init.rawBody;
  if (init.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.body);
  }
  const res = await fetch(`${stack().httpUrl}${path}`, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  let parsed: unknown = text;
  try { parsed = text ? JSON.parse(text) : null; } catch { /* keep text */ }
  return { status: res.status, headers: res.headers, body: parsed };
}
