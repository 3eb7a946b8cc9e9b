// Lint: typed rules everywhere; workflow files may not import Node built-ins or
// activity implementations (Temporal determinism), and floating promises are errors.
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'worker_threads', 'timers', 'process'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', '.tools/**', 'coverage/**', 'scripts/**', '*.js', '*.mjs'] },
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
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: nodeBuiltins.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'Workflow code must be deterministic: no Node built-ins.' })),
        patterns: [{ group: ['../activities/*', '../activities'], message: 'Import activity types only (import type).', allowTypeImports: true }],
      }],
    },
  },
);
