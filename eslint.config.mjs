// Lint: typed rules everywhere; floating promises are errors; and imports point inward
// (docs/architecture.md): the core imports no adapter, engine client or framework; workflow
// files import only the workflow SDK, types and pure code (Temporal determinism); gateways,
// activities, stores and pipelines never reach up into the wiring (roles/); only roles/ and
// main.ts (and tests, benchmarks) import the running services of pipelines/. schemas/ (the JSON
// Schemas of the wire contracts) is a leaf: it imports nothing of the project, and anyone may import it.
import tseslint from 'typescript-eslint';

const nodeBuiltins = ['fs', 'path', 'os', 'crypto', 'http', 'https', 'net', 'child_process', 'worker_threads', 'timers', 'process'];

/** Folders of adapters and wiring, as import patterns. */
const folders = (...names) => names.flatMap((name) => [`**/${name}`, `**/${name}/**`]);
/** Engine clients and frameworks only adapters may use. */
const engineClients = ['express', '@nats-io/*', '@temporalio/*', '@clickhouse/*', 'chdb', 'chdb/*', 'smpp', 'pino', 'prom-client'];
const inward = (message, ...groups) => ({ group: groups.flat(), message });

// Homes (docs/architecture.md): engines are started by infra/local-engines.ts alone (the
// topology's clustered engines: scripts/topology/engines.ts); JetStream messages are published
// by infra/bus/ (over the pipelined client, infra/pipelined-jetstream.ts), not with the client
// library's js.publish elsewhere in the product (no exceptions).
const engineHome = [
  { selector: "CallExpression[callee.name='join'] > Literal:last-child[value=/^(nats-server|temporal|temporal-server)$/], CallExpression[callee.name='spawn'] > Literal:first-child[value=/^(nats-server|temporal|temporal-server)$/]", message: 'Engines are started by infra/local-engines.ts (natsServerSpec, temporalDevSpec, startLocalEngines).' },
  { selector: "CallExpression[callee.name='devServerSpec']", message: 'The Temporal dev server is started with infra/local-engines.ts temporalDevSpec.' },
];
const busHome = [
  { selector: "CallExpression[callee.property.name='publish'][callee.object.name='js'], CallExpression[callee.property.name='publish'][callee.object.property.name='js']", message: 'JetStream publishing lives in infra/bus/ (or goes through the pipelined client, infra/pipelined-jetstream.ts).' },
];
// Outside core/, the SMS, accounts, lookup and carrier modules are read through their entries
// (core/sms/index.ts, ...): their files can move without touching the adapters. Workflows import
// files (the workflow bundle takes only what a workflow uses); tests may reach any file.
const coreEntries = { regex: 'core/(sms|accounts|lookup|carrier)/', message: 'Import the module\'s entry (core/sms, core/accounts, core/lookup, core/carrier), not one of its files (docs/architecture.md).' };
const productFiles = ['*.ts', 'config/**/*.ts', 'core/**/*.ts', 'schemas/**/*.ts', 'infra/**/*.ts', 'stores/**/*.ts', 'gateways/**/*.ts', 'pipelines/**/*.ts', 'activities/**/*.ts', 'cli/**/*.ts'];

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
          // schemas/ (the wire contracts, a leaf) is not listed: the core validates with it.
          inward('The core is the hub: it declares ports and imports no adapter (docs/architecture.md).', folders('gateways', 'roles', 'pipelines', 'stores', 'infra', 'activities', 'workflows', 'cli', 'bench')),
          inward('The core imports no engine client or framework; declare a port instead.', engineClients),
        ],
      }],
    },
  },
  {
    // The bus contract is a leaf of the core (docs/architecture.md): names, payload schemas and
    // the records they carry, read by every role; it imports nothing else of the project but the
    // wire schemas, so no module of the core can pull it into a circle.
    files: ['core/bus/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { regex: '^\\.\\./(?!\\.\\./schemas/)', message: 'core/bus is a leaf: the bus contract imports nothing else of the project but the wire schemas (the records it carries are defined in core/bus/records.ts; the domain modules re-export them).' },
          inward('The core imports no engine client or framework; declare a port instead.', engineClients),
        ],
      }],
    },
  },
  {
    // The wire contracts are data: the core validates with them, the HTTP gateway builds the
    // OpenAPI document from them (gateways/http/openapi.ts); they read nothing back.
    files: ['schemas/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          inward('schemas/ is a leaf: it imports nothing of the project (derive from the schemas instead; docs/architecture.md).', ['..', '../*', '../**', '../../**'], folders('core', 'config', 'gateways', 'roles', 'pipelines', 'stores', 'infra', 'activities', 'workflows', 'cli', 'bench', 'support', 'test', 'types', 'packages')),
          inward('schemas/ is a leaf: no engine client or framework.', engineClients),
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
          inward('Workflow code imports only the workflow SDK, types and pure code.', folders('gateways', 'roles', 'pipelines', 'stores', 'infra', 'cli', 'bench')),
          inward('Workflow code imports only the workflow SDK.', ['express', '@nats-io/*', '@clickhouse/*', 'chdb', 'smpp', 'pino', 'prom-client', '@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing']),
        ],
      }],
    },
  },
  {
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [inward('Activities are factories over core ports; adapters are wired in roles/.', folders('roles', 'pipelines', 'gateways', 'stores', 'workflows', 'cli', 'bench')), coreEntries],
      }],
    },
  },
  {
    files: ['gateways/**/*.ts', 'stores/**/*.ts', 'infra/**/*.ts', 'config/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [inward('Adapters never reach up into the wiring, the running services or the workflow layer; take a port.', folders('roles', 'pipelines', 'activities', 'workflows', 'cli', 'bench')), coreEntries],
      }],
    },
  },
  {
    // roles/ stays wiring: it builds adapters and services once and hands them their ports. A
    // loop that runs (a consumer, a timer, a watch), a class with state, or a long file is a
    // service: it belongs in pipelines/ (or gateways/, stores/), where it can be unit-tested.
    files: ['roles/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 160 }],
      'no-restricted-syntax': ['error',
        { selector: 'ClassDeclaration[superClass.name!="Error"], ClassExpression', message: 'roles/ is wiring: a class with behaviour is an adapter or a service (pipelines/).' },
        { selector: 'CallExpression[callee.name=/^(setTimeout|setInterval)$/]', message: 'roles/ is wiring: a timer is a running service; put it in pipelines/.' },
        { selector: 'ForOfStatement[await=true]', message: 'roles/ is wiring: a loop over a stream or a watch is a running service; put it in pipelines/.' },
        ...engineHome, ...busHome,
      ],
      'no-restricted-imports': ['error', {
        patterns: [inward('roles/ is wiring: the durable-consumer loop runs in pipelines/ (or a gateway), not in the wiring.', ['**/infra/consumer']), coreEntries],
      }],
    },
  },
  {
    files: ['cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [inward('The admin CLI does not run the services of pipelines/ (roles/ wires them into the product processes).', folders('pipelines')), coreEntries],
      }],
    },
  },
  {
    // The running services (the path a message takes after its 201): factories over core ports
    // and adapters, built and started by roles/.
    files: ['pipelines/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: folders('workflows'), message: 'Pipelines import workflow types only (import type); signal and workflow names are in core/bus.', allowTypeImports: true },
          inward('Pipelines are built by roles/ and take ports; they never reach up into the wiring, activities, the CLI or benchmarks.', folders('roles', 'activities', 'cli', 'bench')),
          coreEntries,
        ],
      }],
    },
  },
  // main.ts (the process entry) is outside core/ too: it reads the modules through their entries.
  { files: ['*.ts'], rules: { 'no-restricted-imports': ['error', { patterns: [coreEntries] }] } },
  // After the folder blocks: no-restricted-syntax of roles/ above carries the same selectors.
  { files: productFiles, ignores: ['infra/local-engines.ts', 'infra/bus/**'], rules: { 'no-restricted-syntax': ['error', ...engineHome, ...busHome] } },
  { files: ['infra/bus/**/*.ts', 'test/**/*.ts', 'support/**/*.ts', 'bench/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...engineHome] } },
  {
    // What the test suites and the benchmarks share is in support/ (the stack, generated rows, a webhook receiver).
    files: ['bench/**/*.ts', 'support/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [inward('bench/ and support/ never import test/: what the suites and the benchmarks share lives in support/ (docs/architecture.md).', folders('test')), coreEntries],
      }],
    },
  },
);
