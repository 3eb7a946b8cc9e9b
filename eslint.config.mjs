// Lint: typed rules everywhere; floating promises are errors; and imports point inward
// (docs/architecture.md): the core imports no adapter, engine client or framework; workflow
// files import only the workflow SDK, types and pure code (Temporal determinism); gateways,
// activities and stores never reach up into the wiring (roles/).
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'worker_threads', 'timers', 'process'];

/** Folders of adapters and wiring, as import patterns. */
const folders = (...names) => names.flatMap((name) => [`**/${name}`, `**/${name}/**`]);
/** Engine clients and frameworks only adapters may use. */
const engineClients = ['express', '@nats-io/*', '@temporalio/*', '@clickhouse/*', 'chdb', 'chdb/*', 'smpp', 'pino', 'prom-client'];
const inward = (message, ...groups) => ({ group: groups.flat(), message });

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', '.tools/**', 'coverage/**', 'dist/**', 'scripts/**', '*.js', '*.mjs'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          inward('The core is the hub: it declares ports and imports no adapter (docs/architecture.md).', folders('gateways', 'roles', 'stores', 'infra', 'activities', 'workflows', 'cli', 'bench')),
          inward('The core imports no engine client or framework; declare a port instead.', engineClients),
        ],
      }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'Workflow code must be deterministic: no Node built-ins.' })),
        patterns: [
          { group: ['../activities/*', '../activities'], message: 'Import activity types only (import type).', allowTypeImports: true },
          inward('Workflow code imports only the workflow SDK, types and pure code.', folders('gateways', 'roles', 'stores', 'infra', 'cli', 'bench')),
          inward('Workflow code imports only the workflow SDK.', ['express', '@nats-io/*', '@clickhouse/*', 'chdb', 'smpp', 'pino', 'prom-client', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing']),
        ],
      }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [inward('Activities are factories over core ports; adapters are wired in roles/.', folders('roles', 'gateways', 'stores', 'workflows', 'cli', 'bench'))],
      }],
    },
  },
  {
    files: ['gateways/**/*.ts', 'stores/**/*.ts', 'infra/**/*.ts', 'config/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [inward('Adapters never reach up into the wiring or the workflow layer; take a port.', folders('roles', 'activities', 'workflows', 'cli', 'bench'))],
      }],
    },
  },
);
