// roles/ stays wiring (docs/architecture.md, "What each folder may import"): eslint.config.mjs
// refuses in roles/ what makes a running service (a class with behaviour, a timer, a loop over a
// stream or watch, the durable-consumer loop) and files over 160 lines; the services live in
// pipelines/. This runs the project's own lint configuration: the rules are on, and roles/ passes them.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const WIRING_RULES = new Set(['max-lines', 'no-restricted-syntax', 'no-restricted-imports']);

const SERVICE_IN_ROLES = [
  "import { consumeBatches } from '../infra/consumer';",
  'export class Poller { polls = 0; }',
  'export const every = (): void => { setInterval(() => undefined, 1000); };',
  'export async function drain(watch: AsyncIterable<number>): Promise<void> { for await (const entry of watch) void entry; }',
  'export class ConfigError extends Error {}',
  'export const loop = consumeBatches;',
  '',
].join('\n');

interface Linted { readonly filePath: string; readonly messages: ReadonlyArray<{ ruleId: string | null; line: number; message: string }> }

/**
 * The project's ESLint over the probes (as files of roles/) and over roles/ itself, in a child
 * process: ESLint loads eslint.config.mjs with a dynamic import, which jest's module sandbox refuses.
 * Only the wiring rules run, without type information: they are syntax rules, and building the
 * TypeScript program for the typed rules took most of the time (about 8 s of 9).
 */
function lint(probes: readonly string[]): { probes: Linted[]; roles: Linted[] } {
  const script = `
    const { ESLint } = require('eslint');
    (async () => {
      const wiring = new Set(${JSON.stringify([...WIRING_RULES])});
      const eslint = new ESLint({
        cwd: process.cwd(),
        overrideConfig: { languageOptions: { parserOptions: { project: null, projectService: false } } },
        ruleFilter: ({ ruleId }) => wiring.has(ruleId),
      });
      const probes = [];
      for (const text of JSON.parse(process.argv[1])) probes.push(...(await eslint.lintText(text, { filePath: require('node:path').join(process.cwd(), 'roles', 'worker.ts') })));
      const roles = await eslint.lintFiles(['roles/*.ts']);
      const pick = (r) => ({ filePath: r.filePath, messages: r.messages.map((m) => ({ ruleId: m.ruleId, line: m.line, message: m.message })) });
      process.stdout.write(JSON.stringify({ probes: probes.map(pick), roles: roles.map(pick) }));
    })().catch((err) => { console.error(err); process.exit(1); });`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script, JSON.stringify(probes)], { cwd: ROOT, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })) as { probes: Linted[]; roles: Linted[] };
}

const wiringProblems = (r: Linted | undefined): string[] => (r?.messages ?? []).filter((m) => m.ruleId && WIRING_RULES.has(m.ruleId)).map((m) => `${m.line}:${m.ruleId}`);

describe('roles/ is wiring only (eslint.config.mjs)', () => {
  let linted: { probes: Linted[]; roles: Linted[] };
  beforeAll(() => {
    const long = Array.from({ length: 170 }, (_, i) => `export const wire${i} = ${i};`).join('\n');
    linted = lint([SERVICE_IN_ROLES, `${long}\n`]);
  }, 180_000);

  test('a service written in roles/ is refused: the consumer loop, a class, a timer, a for-await loop (an Error subclass is fine)', () => {
    expect(wiringProblems(linted.probes[0])).toEqual(['1:no-restricted-imports', '2:no-restricted-syntax', '3:no-restricted-syntax', '4:no-restricted-syntax']);
  });

  test('a roles/ file over 160 lines is refused (max-lines)', () => {
    expect(wiringProblems(linted.probes[1])).toEqual(['161:max-lines']);
  });

  test('every file of roles/ passes those rules', () => {
    expect(linted.roles.length).toBeGreaterThan(5);
    expect(linted.roles.flatMap((r) => wiringProblems(r).map((p) => `${r.filePath}:${p}`))).toEqual([]);
  });
});
