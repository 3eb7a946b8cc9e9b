// Running schemathesis (pinned in .tools/py by the bootstrap) for the OpenAPI fuzz suites:
// one runner and one way to read its outcome, so the suites differ only in what they fuzz.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..', '..');
export const SCHEMATHESIS = join(ROOT, '.tools', 'py', 'bin', 'schemathesis');
export const SCHEMATHESIS_CONFIG = (name: string): string => join(ROOT, 'test', 'support', name);

/** The conformance checks every fuzz suite asks for. */
export const FUZZ_CHECKS = [
  'not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_headers_conformance', 'response_schema_conformance',
  'negative_data_rejection', 'missing_required_header', 'ignored_auth', 'unsupported_method', 'allow_header_conformance',
];

/** Options every run shares: one worker, no colour, truncated output, no health-check refusals. */
export const FUZZ_COMMON_ARGS = ['--workers', '1', '--generation-with-security-parameters', 'false', '--request-timeout', '10', '--no-color', '--output-truncate', 'true', '--suppress-health-check', 'all'];

export interface FuzzOutcome {
  readonly code: number;
  readonly output: string;
  /** The operations schemathesis reports as tested. */
  readonly tested: number | undefined;
  /** The closing lines worth showing when it failed. */
  readonly summary: string[];
}

export async function runSchemathesis(args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<FuzzOutcome> {
  if (!existsSync(SCHEMATHESIS)) throw new Error('schemathesis is not installed in .tools/py: run `npm run bootstrap -- --fuzzer` (npm test does it)');
  const outcome = await promisify(execFile)(SCHEMATHESIS, [...args], { cwd: options.cwd, timeout: 270_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: '1', ...(options.env ?? {}) } })
    .then(({ stdout }) => ({ code: 0, output: stdout }))
    .catch((err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, output: `${err.stdout ?? ''}\n${err.stderr ?? ''}` }));
  if (outcome.code !== 0) process.stderr.write(outcome.output);
  const tested = /Tested:\s+(\d+)/.exec(outcome.output)?.[1];
  return { ...outcome, tested: tested === undefined ? undefined : Number(tested), summary: outcome.output.split('\n').filter((l) => /FAILURES|passed|failed|error/i.test(l)).slice(-20) };
}
