// The environment is one contract between config/index.ts (ENV_VARS, the single source of
// every setting), the product code that reads it, the README that documents it and the
// distributed deployment in compose/ that sets it. No engine needed: files are read and
// the compose file is parsed with a real YAML parser.
//
// `yaml` is imported as a transitive dependency (testcontainers -> docker-compose -> yaml,
// hoisted to node_modules/yaml); it should become a direct devDependency.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { ENV_VARS } from '../../config';
import { ROLES } from '../../roles/process-plan';
import { productProcesses, TOPOLOGY } from '../../scripts/topology/plan';
import { DYNAMIC_CONFIG } from '../../scripts/topology/temporal-config';

const ROOT = join(__dirname, '..', '..');
const COMPOSE_FILE = join(ROOT, 'compose', 'docker-compose.yml');
const DOCKERFILE = join(ROOT, 'compose', 'Dockerfile');
const PRODUCT_IMAGE = 'localhost/sms-platform:latest';
/** The pinned nats-server of scripts/go-tools.mjs (the image localhost/sms-nats is built from it). */
const NATS_VERSION = /'nats-server': \{ module: '[^']+', version: 'v([^']+)' \}/.exec(readFileSync(join(ROOT, 'scripts', 'go-tools.mjs'), 'utf8'))?.[1];
const KNOWN = new Set(ENV_VARS.map((v) => v.name));

/** Folders of product code (what runs in production), plus main.ts at the root. */
const PRODUCT_DIRS = ['config', 'core', 'infra', 'stores', 'gateways', 'workflows', 'activities', 'roles', 'cli'];

// Variables product code may read although they are not product settings (so they are
// neither in ENV_VARS nor in the README's configuration table). Keep this list short:
// - NODE_ENV: the Node ecosystem's convention (compose/Dockerfile sets it to production and
//   libraries such as express read it); not a knob of ours.
// - CI: set by CI runners; only for test-harness behaviour such as longer timeouts.
// - TEST_*: hooks reserved for the test suites, never documented as settings.
const ALLOWED_NAMES = new Set(['NODE_ENV', 'CI']);
const ALLOWED_PATTERNS = [/^TEST_[A-Z0-9_]+$/];
const isAllowed = (name: string): boolean => KNOWN.has(name) || ALLOWED_NAMES.has(name) || ALLOWED_PATTERNS.some((p) => p.test(name));

const read = (path: string): string => readFileSync(path, 'utf8');

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (entry === 'node_modules') return [];
    if (statSync(path).isDirectory()) return tsFiles(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

function productFiles(): string[] {
  return [join(ROOT, 'main.ts'), ...PRODUCT_DIRS.flatMap((d) => tsFiles(join(ROOT, d)))];
}

/** Block comments and whole-line `//` comments out; the rest stays. */
function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

interface EnvReads {
  /** Names read literally. */
  readonly names: string[];
  /** `process.env[<expression>]`: names that cannot be checked. */
  readonly computed: string[];
}

/**
 * Environment reads in one source file: `process.env.X`, `process.env['X']`,
 * `const { X } = process.env`, and, in config/index.ts (which receives the environment
 * as `env`), `env['X']` / `env.X`.
 */
function envReads(source: string, isConfigFile: boolean): EnvReads {
  const code = stripComments(source);
  const names: string[] = [];
  const computed: string[] = [];
  for (const m of code.matchAll(/\bprocess\.env\.([A-Za-z_$][\w$]*)/g)) names.push(m[1] as string);
  for (const m of code.matchAll(/\bprocess\.env\[\s*(['"`])([^'"`]+)\1\s*\]/g)) names.push(m[2] as string);
  for (const m of code.matchAll(/\bprocess\.env\[\s*(?!['"`])([^\]]*)\]/g)) computed.push(m[0]);
  for (const m of code.matchAll(/\b(?:const|let|var)\s*\{([^}]*)\}\s*=\s*process\.env\b/g)) {
    for (const part of (m[1] as string).split(',')) {
      const name = part.split(/[:=]/)[0]?.trim().replace(/^\.\.\./, '');
      if (name) names.push(name);
    }
  }
  if (isConfigFile) {
    for (const m of code.matchAll(/(?<![\w.])env\[\s*(['"`])([^'"`]+)\1\s*\]/g)) names.push(m[2] as string);
    for (const m of code.matchAll(/(?<![\w.])env\.([A-Z_][A-Z0-9_]*)\b/g)) names.push(m[1] as string);
  }
  return { names, computed };
}

// ---------------------------------------------------------------------------------------
// compose/docker-compose.yml
// ---------------------------------------------------------------------------------------

interface Service {
  readonly name: string;
  readonly raw: Record<string, unknown>;
  readonly env: Record<string, string>;
  readonly command: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function environmentOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (Array.isArray(value)) {
    return Object.fromEntries(value.map((item) => {
      const [k, ...rest] = String(item).split('=');
      return [k as string, rest.join('=')];
    }));
  }
  if (!isRecord(value)) throw new Error(`environment must be a map or a list, got ${JSON.stringify(value)}`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, v === null || v === undefined ? '' : String(v)]));
}

function commandOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value.map(String);
  return String(value).split(/\s+/).filter(Boolean);
}

function parseCompose(text: string): { doc: Record<string, unknown>; services: Service[] } {
  // merge: true resolves the `<<:` merge keys the compose file uses (as Docker Compose does).
  const doc: unknown = parse(text, { merge: true });
  if (!isRecord(doc) || !isRecord(doc['services'])) throw new Error('compose file has no services map');
  const services = Object.entries(doc['services']).map(([name, raw]) => {
    if (!isRecord(raw)) throw new Error(`service ${name} is not a map`);
    return { name, raw, env: environmentOf(raw['environment']), command: commandOf(raw['command']) };
  });
  return { doc, services };
}

/** Product services are the ones that run the product image (compose/Dockerfile, built by `npm run images`). */
const productServices = (services: Service[]): Service[] => services.filter((s) => s.raw['image'] === PRODUCT_IMAGE);
/** The writer that owns embedded chdb and serves it to the other roles (`--serve-clickhouse`). */
const servesClickHouse = (s: Service): boolean => s.command.some((a) => a.startsWith('--serve-clickhouse='));

const roleOf = (s: Service): string | undefined => s.command.find((a) => a.startsWith('--role='))?.slice('--role='.length);

function loadCompose(): { doc: Record<string, unknown>; services: Service[]; products: Service[] } {
  const parsed = parseCompose(read(COMPOSE_FILE));
  return { ...parsed, products: productServices(parsed.services) };
}

/** Role lists: ROLES from roles/process-plan.ts, CLICKHOUSE_ROLES from main.ts (not imported: importing main.ts would start the process). */
function rolesFromMain(): { roles: string[]; clickhouseRoles: string[] } {
  const main = read(join(ROOT, 'main.ts'));
  const list = (re: RegExp, what: string): string[] => {
    const m = re.exec(main);
    if (!m) throw new Error(`main.ts: could not find ${what}; update test/unit/compose-env.test.ts if it moved`);
    return [...(m[1] as string).matchAll(/'([^']+)'/g)].map((x) => x[1] as string);
  };
  return {
    roles: [...ROLES],
    clickhouseRoles: list(/const CLICKHOUSE_ROLES\b[^=]*=\s*\[([^\]]*)\]/, 'const CLICKHOUSE_ROLES = [...]'),
  };
}

/** Problems with the environment of the product services; empty when all is well. */
function composeEnvProblems(products: Service[], clickhouseRoles: string[]): string[] {
  const problems: string[] = [];
  for (const s of products) {
    for (const name of Object.keys(s.env)) if (!KNOWN.has(name)) problems.push(`${s.name}: ${name} is not in ENV_VARS`);
    for (const name of ['NATS_URL', 'TEMPORAL_ADDRESS']) if (!s.env[name]) problems.push(`${s.name}: ${name} is not set (the product would spawn an embedded engine)`);
    const role = roleOf(s);
    if (role && clickhouseRoles.includes(role)) {
      if (servesClickHouse(s)) {
        // The owner of embedded chdb: no CLICKHOUSE_URL (it would not open chdb), the link's secret.
        if (s.env['CLICKHOUSE_URL']) problems.push(`${s.name}: CLICKHOUSE_URL is set although it serves its embedded ClickHouse (--serve-clickhouse)`);
        if ((s.env['CLICKHOUSE_PASSWORD'] ?? '').length < 16) problems.push(`${s.name}: CLICKHOUSE_PASSWORD (the chdb link's secret, at least 16 characters) is not set`);
        continue;
      }
      // A ClickHouse server needs its user and database too; the chdb link only the secret.
      const server = /^https?:/.test(s.env['CLICKHOUSE_URL'] ?? '');
      const needed = server ? ['CLICKHOUSE_URL', 'CLICKHOUSE_USER', 'CLICKHOUSE_PASSWORD', 'CLICKHOUSE_DATABASE'] : ['CLICKHOUSE_URL', 'CLICKHOUSE_PASSWORD'];
      for (const name of needed) {
        if (!s.env[name]) problems.push(`${s.name}: ${name} is not set (role ${role} uses ClickHouse; unset means embedded chdb)`);
      }
    }
  }
  return problems;
}

describe('environment reads in product code', () => {
  test('scanner: recognises process.env.X, process.env[\'X\'], destructuring, computed names and env[\'X\'] in config', () => {
    const sample = [
      "const a = process.env.ALPHA_ONE;",
      "const b = process.env['BRAVO'] ?? process.env[\"CHARLIE\"];",
      "const { DELTA, ECHO: e = 'x' } = process.env;",
      "const f = process.env[name];",
      "// process.env.IN_A_COMMENT is not a read",
      "const g = env['FOXTROT'] ?? env.GOLF;",
    ].join('\n');
    expect(envReads(sample, false)).toEqual({ names: ['ALPHA_ONE', 'BRAVO', 'CHARLIE', 'DELTA', 'ECHO'], computed: ['process.env[name]'] });
    expect(envReads(sample, true).names).toEqual(expect.arrayContaining(['FOXTROT', 'GOLF']));
  });

  test('product code: every process.env read (and env[...] in config/index.ts) is an ENV_VARS name or allow-listed', () => {
    const files = productFiles();
    const configFile = join(ROOT, 'config', 'index.ts');
    expect(files).toEqual(expect.arrayContaining([configFile, join(ROOT, 'main.ts')]));
    const unknown: string[] = [];
    for (const file of files) {
      for (const name of envReads(read(file), file === configFile).names) {
        if (!isAllowed(name)) unknown.push(`${relative(ROOT, file)}: ${name}`);
      }
    }
    expect(unknown).toEqual([]);
  });

  test('product code: no process.env read with a computed name (it could not be checked against ENV_VARS)', () => {
    const computed = productFiles().flatMap((file) => envReads(read(file), false).computed.map((c) => `${relative(ROOT, file)}: ${c}`));
    expect(computed).toEqual([]);
  });
});

describe('README', () => {
  test('docs/configuration.md: names every ENV_VARS variable', () => {
    const readmePath = join(ROOT, 'docs', 'configuration.md');
    expect(existsSync(readmePath)).toBe(true);
    const readme = read(readmePath);
    const missing = ENV_VARS.map((v) => v.name).filter((name) => !new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`).test(readme));
    expect(missing).toEqual([]);
  });
});

describe('compose/docker-compose.yml', () => {
  test('compose: parses (merge keys resolved) and has product services on the product image (no build: npm run images makes it), each with a --role', () => {
    const { services, products } = loadCompose();
    expect(services.length).toBeGreaterThan(products.length);
    expect(products.length).toBeGreaterThan(0);
    for (const s of products) {
      expect({ service: s.name, build: s.raw['build'] }).toEqual({ service: s.name, build: undefined });
      expect({ service: s.name, role: roleOf(s) }).toEqual({ service: s.name, role: expect.any(String) });
      expect(Object.keys(s.env)).not.toContain('<<');
    }
  });

  test('compose: every environment variable set for a product service is an ENV_VARS name (no typos)', () => {
    const { products } = loadCompose();
    const unknown = products.flatMap((s) => Object.keys(s.env).filter((n) => !KNOWN.has(n)).map((n) => `${s.name}: ${n}`));
    expect(unknown).toEqual([]);
  });

  test('compose: every product service sets NATS_URL and TEMPORAL_ADDRESS (no engine is spawned)', () => {
    const { products } = loadCompose();
    const missing = products.flatMap((s) => ['NATS_URL', 'TEMPORAL_ADDRESS'].filter((n) => !s.env[n]).map((n) => `${s.name}: ${n}`));
    expect(missing).toEqual([]);
  });

  test('compose: services of the ClickHouse roles (main.ts CLICKHOUSE_ROLES) reach it: the writer serves its chdb with a secret, gateway-http sets CLICKHOUSE_URL and the secret', () => {
    const { products } = loadCompose();
    const { clickhouseRoles } = rolesFromMain();
    expect(clickhouseRoles).toContain('gateway-http');
    const withClickHouse = products.filter((s) => clickhouseRoles.includes(roleOf(s) ?? ''));
    expect(withClickHouse.map((s) => s.name)).toEqual(expect.arrayContaining(['gateway-http-1', 'gateway-http-2']));
    expect(composeEnvProblems(withClickHouse, clickhouseRoles)).toEqual([]);
    const owners = withClickHouse.filter(servesClickHouse);
    expect(owners.map((s) => s.name)).toEqual(['ingest-writer']);
    const port = (owners[0] as Service).command.find((a) => a.startsWith('--serve-clickhouse='));
    for (const client of withClickHouse.filter((s) => !servesClickHouse(s))) {
      expect({ service: client.name, url: client.env['CLICKHOUSE_URL'], secret: client.env['CLICKHOUSE_PASSWORD'] })
        .toEqual({ service: client.name, url: 'chdb+http://ingest-writer:8124', secret: (owners[0] as Service).env['CLICKHOUSE_PASSWORD'] });
    }
    // main.ts serves on loopback only: the writer's entrypoint forwards 8124 to that port.
    expect(JSON.stringify((owners[0] as Service).raw['entrypoint'])).toContain(`TCP-LISTEN:8124,fork,reuseaddr TCP:127.0.0.1:${port?.split('=')[1] as string}`);
  });

  test('compose: every product service runs a role of ROLES (roles/process-plan.ts), and every role has a service', () => {
    const { products } = loadCompose();
    const { roles } = rolesFromMain();
    const served = products.map(roleOf);
    expect(served.filter((r) => !roles.includes(r ?? ''))).toEqual([]);
    expect(roles.filter((r) => !served.includes(r))).toEqual([]);
  });

  test('compose: NATS_URL lists the three JetStream nodes of the file and NATS_REPLICAS is 3', () => {
    const { services, products } = loadCompose();
    const natsNodes = services.filter((s) => String(s.raw['image'] ?? '').startsWith('localhost/sms-nats:'));
    expect(natsNodes.map((s) => s.name).sort()).toEqual(['nats-1', 'nats-2', 'nats-3']);
    for (const node of natsNodes) {
      expect({ node: node.name, image: node.raw['image'] }).toEqual({ node: node.name, image: `localhost/sms-nats:${NATS_VERSION as string}` });
      expect({ node: node.name, js: node.command.includes('-js') }).toEqual({ node: node.name, js: true });
      expect({ node: node.name, volumes: (node.raw['volumes'] as unknown[] | undefined)?.map(String) }).toEqual({ node: node.name, volumes: [`${node.name}-data:/data`] });
    }
    const expectedUrls = natsNodes.map((s) => `nats://${s.name}:4222`).sort();
    for (const s of products) {
      const urls = (s.env['NATS_URL'] ?? '').split(',').map((u) => u.trim()).sort();
      expect({ service: s.name, urls, replicas: s.env['NATS_REPLICAS'] }).toEqual({ service: s.name, urls: expectedUrls, replicas: '3' });
    }
  });

  test('compose: DEMO_SEED is "false" on every product service except gateway-http', () => {
    const { products } = loadCompose();
    for (const s of products) {
      const expected = roleOf(s) === 'gateway-http' ? 'true' : 'false';
      expect({ service: s.name, DEMO_SEED: s.env['DEMO_SEED'] }).toEqual({ service: s.name, DEMO_SEED: expected });
    }
  });

  test('compose: every product service sets DATA_DIR=/data and mounts a named volume there', () => {
    const { doc, products } = loadCompose();
    const declared = isRecord(doc['volumes']) ? Object.keys(doc['volumes']) : [];
    for (const s of products) {
      const mounts = ((s.raw['volumes'] as unknown[] | undefined) ?? []).map(String).filter((v) => v.split(':')[1] === '/data');
      const volume = mounts[0]?.split(':')[0] ?? '';
      expect({ service: s.name, DATA_DIR: s.env['DATA_DIR'], mounts: mounts.length, declared: declared.includes(volume) })
        .toEqual({ service: s.name, DATA_DIR: '/data', mounts: 1, declared: true });
    }
  });

  test('compose: the header comment lists every service', () => {
    const text = read(COMPOSE_FILE);
    const lines = text.split('\n');
    const end = lines.findIndex((l) => !l.startsWith('#'));
    const header = lines.slice(0, end === -1 ? lines.length : end).join('\n');
    const { services } = loadCompose();
    const missing = services.map((s) => s.name).filter((name) => !new RegExp(`(?<![\\w-])${name}(?![\\w-])`).test(header));
    expect(header.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });

  test('compose checker: flags a misspelt variable, a missing NATS_URL and a ClickHouse role without CLICKHOUSE_URL', () => {
    const { products } = loadCompose();
    const gateway = products.find((s) => roleOf(s) === 'gateway-http');
    expect(gateway).toBeDefined();
    const { NATS_URL: _dropped, CLICKHOUSE_URL: _alsoDropped, ...rest } = (gateway as Service).env;
    const broken: Service = { ...(gateway as Service), env: { ...rest, TEMPORAL_ADRESS: 'temporal:7233' } };
    expect(composeEnvProblems([gateway as Service], ['gateway-http'])).toEqual([]);
    expect(composeEnvProblems([broken], ['gateway-http'])).toEqual([
      'gateway-http-1: TEMPORAL_ADRESS is not in ENV_VARS',
      'gateway-http-1: NATS_URL is not set (the product would spawn an embedded engine)',
      'gateway-http-1: CLICKHOUSE_URL is not set (role gateway-http uses ClickHouse; unset means embedded chdb)',
    ]);
    const writer = products.find(servesClickHouse) as Service;
    const { CLICKHOUSE_PASSWORD: _secret, ...writerRest } = writer.env;
    expect(composeEnvProblems([writer], ['ingest-writer'])).toEqual([]);
    expect(composeEnvProblems([{ ...writer, env: { ...writerRest, CLICKHOUSE_URL: 'http://clickhouse:8123' } }], ['ingest-writer'])).toEqual([
      'ingest-writer: CLICKHOUSE_URL is set although it serves its embedded ClickHouse (--serve-clickhouse)',
      'ingest-writer: CLICKHOUSE_PASSWORD (the chdb link\'s secret, at least 16 characters) is not set',
    ]);
    expect(composeEnvProblems([{ ...(gateway as Service), env: { ...(gateway as Service).env, CLICKHOUSE_URL: 'http://clickhouse:8123' } }], ['gateway-http'])).toEqual([
      'gateway-http-1: CLICKHOUSE_USER is not set (role gateway-http uses ClickHouse; unset means embedded chdb)',
      'gateway-http-1: CLICKHOUSE_DATABASE is not set (role gateway-http uses ClickHouse; unset means embedded chdb)',
    ]);
  });
});

describe('compose/docker-compose.yml describes the topology of scripts/topology (npm run topology)', () => {
  const replicasOf = (s: Service): number => {
    const deploy = s.raw['deploy'];
    return isRecord(deploy) && typeof deploy['replicas'] === 'number' ? deploy['replicas'] : 1;
  };
  const count = (roles: string[]): Record<string, number> => roles.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r]: (acc[r] ?? 0) + 1 }), {});

  test('the same processes per role (replicas counted): 2 × gateway-http, 2 × worker, one of each other role', () => {
    const { products } = loadCompose();
    const compose = count(products.flatMap((s) => Array.from({ length: replicasOf(s) }, () => roleOf(s) as string)));
    const topology = count(productProcesses().flatMap((p) => [...p.roles]));
    expect(compose).toEqual(topology);
    expect(topology).toMatchObject({ 'gateway-http': 2, worker: 2 });
  });

  test('the same Temporal server version, history shards, dynamic config and namespace retention', () => {
    const { services } = loadCompose();
    const temporal = services.find((s) => s.name === 'temporal') as Service;
    expect(temporal.raw['image']).toBe(`localhost/sms-temporal:${TOPOLOGY.temporalVersion.replace(/^v/, '')}`);
    expect(temporal.env['NUM_HISTORY_SHARDS']).toBe(String(TOPOLOGY.historyShards));
    expect(TOPOLOGY.historyShards).toBeGreaterThanOrEqual(8);
    const mount = ((temporal.raw['volumes'] as unknown[]) ?? []).map(String).find((v) => v.includes('dynamicconfig')) ?? '';
    const file = join(ROOT, 'compose', mount.split(':')[0] as string, (temporal.env['DYNAMIC_CONFIG_FILE_PATH'] ?? '').split('/').pop() as string);
    expect(file).toBe(DYNAMIC_CONFIG);
    const namespaceJob = services.find((s) => s.name === 'temporal-create-namespace') as Service;
    expect(namespaceJob.env['NAMESPACE_RETENTION']).toBe(TOPOLOGY.namespaceRetention);
    expect(namespaceJob.env['DEFAULT_NAMESPACE']).toBe(TOPOLOGY.namespace);
  });

  test('the same JetStream replication', () => {
    const { products } = loadCompose();
    expect(new Set(products.map((s) => s.env['NATS_REPLICAS']))).toEqual(new Set([String(TOPOLOGY.natsReplicas)]));
  });
});

describe('compose/Dockerfile (the product image, built by scripts/images.mjs)', () => {
  const IMAGES_SCRIPT = join(ROOT, 'scripts', 'images.mjs');

  test('Dockerfile: on the local Debian base, Node and the staged app copied in, a non-root user, /health as health check, tini then dist/main.js', () => {
    const text = read(DOCKERFILE);
    expect(text).toMatch(/^FROM localhost\/sms-base:bookworm\s*$/m);
    expect(text).toMatch(/^COPY node \/usr\/local\/bin\/node\s*$/m);
    expect(text).toMatch(/^COPY app \/app\s*$/m);
    expect(text).toMatch(/^USER sms\s*$/m);
    expect(text).toMatch(/^HEALTHCHECK [\s\S]*\/health/m);
    expect(text).toMatch(/^ENTRYPOINT \["tini", "--", "node", "dist\/main\.js"\]\s*$/m);
  });

  test('images.mjs stages the folders of tsconfig.build.json, and they cover main.ts and every source folder of tsconfig.json (test/, bench/, support/ and packages/ excepted)', () => {
    const script = read(IMAGES_SCRIPT);
    expect(script).toMatch(/productFolders = \(\) => JSON\.parse\(readFileSync\(join\(root, 'tsconfig\.build\.json'\)/);
    expect(script).toMatch(/npm', \['install', '--omit=dev'/);
    const build = JSON.parse(read(join(ROOT, 'tsconfig.build.json'))) as { include: string[] };
    const tsconfig = JSON.parse(read(join(ROOT, 'tsconfig.json'))) as { include: string[] };
    // packages/: npm packages of their own for users (not the product); support/: what tests and benchmarks share; neither in the image.
    const folders = tsconfig.include.filter((p) => !p.includes('*') && !['test', 'bench', 'support', 'packages'].includes(p) && existsSync(join(ROOT, p)));
    const rootTs = readdirSync(ROOT).filter((f) => f.endsWith('.ts'));
    expect(folders).toEqual(expect.arrayContaining(PRODUCT_DIRS.filter((d) => existsSync(join(ROOT, d)))));
    expect([...rootTs, ...folders].filter((p) => !build.include.includes(p))).toEqual([]);
  });

  test('package.json: every package the product imports at run time (tsx included) is a dependency, as the image omits devDependencies', () => {
    const pkg = JSON.parse(read(join(ROOT, 'package.json'))) as { dependencies?: Record<string, string> };
    const deps = new Set(Object.keys(pkg.dependencies ?? {}));
    const builtins = new Set(builtinModules);
    const packageOf = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0] as string);
    const imported = new Set<string>(['tsx']);
    for (const file of productFiles()) {
      const code = stripComments(read(file));
      const specs = [
        ...[...code.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] as string),
        ...[...code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] as string),
        ...[...code.matchAll(/\b(?:require|import)\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] as string),
      ];
      for (const spec of specs) {
        if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || builtins.has(spec.split('/')[0] as string)) continue;
        imported.add(packageOf(spec));
      }
    }
    expect(imported.size).toBeGreaterThan(5);
    expect([...imported].filter((p) => !deps.has(p)).sort()).toEqual([]);
  });
});
