// The one place that reads process.env: every setting the product understands, validated
// against a JSON Schema at boot (with defaults from the schema) and frozen. The table in
// ENV_VARS is also the documentation source checked by test/unit/config-docs.test.ts (README table).
import Ajv from 'ajv';
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import { resolve } from 'node:path';

export interface EnvVarSpec {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'boolean';
  readonly default?: string | number | boolean;
  readonly description: string;
}

export const ENV_VARS: readonly EnvVarSpec[] = [
  { name: 'DATA_DIR', type: 'string', default: './data', description: 'Directory for the embedded engines: JetStream store, Temporal SQLite file, chdb data, demo credentials.' },
  { name: 'HTTP_HOST', type: 'string', default: '0.0.0.0', description: 'Address the HTTP gateway listens on.' },
  { name: 'HTTP_PORT', type: 'integer', default: 8080, description: 'Port of the HTTP gateway (SMS API, legacy API, ingestion, /health, /metrics).' },
  { name: 'SMPP_PORT', type: 'integer', default: 2775, description: 'Port of the customer-facing SMPP server.' },
  { name: 'SMPP_MAX_SESSIONS_PER_SYSTEM_ID', type: 'integer', default: 10, description: 'Bound SMPP sessions per system_id per process.' },
  { name: 'SMPP_WINDOW', type: 'integer', default: 100, description: 'submit_sm/query_sm in progress per SMPP session; beyond, ESME_RTHROTTLED.' },
  { name: 'SMPP_SUBMITS_PER_SECOND', type: 'integer', default: 10000, description: 'Per-session submit_sm rate; beyond, ESME_RTHROTTLED.' },
  { name: 'SMPP_IDLE_TIMEOUT_SECONDS', type: 'integer', default: 120, description: 'An SMPP session with no PDU for this long is unbound and closed.' },
  { name: 'SMPP_CONCAT_TIMEOUT_SECONDS', type: 'integer', default: 60, description: 'How long the parts of a UDH-concatenated submit are waited for.' },
  { name: 'SIMULATOR_PORT', type: 'integer', default: 2776, description: 'Port of the carrier simulator SMSC (embedded default only).' },
  { name: 'NATS_URL', type: 'string', description: 'External NATS server(s), comma-separated. When set, no nats-server is spawned.' },
  { name: 'SMPP_BIND_FAILURE_WINDOW_SECONDS', type: 'integer', default: 60, description: 'Failed SMPP binds (unknown system_id, wrong password) are counted over this sliding window.' },
  { name: 'SMPP_BIND_MAX_FAILURES_PER_SYSTEM_ID', type: 'integer', default: 5, description: 'Failed binds of one system_id within the window that lock it out (binds refused with ESME_RBINDFAIL, unchecked); 0 = not counted.' },
  { name: 'SMPP_BIND_MAX_FAILURES_PER_ADDRESS', type: 'integer', default: 20, description: 'Failed binds from one peer IP address within the window that lock it out; 0 = not counted (behind a proxy that hides client addresses).' },
  { name: 'SMPP_BIND_LOCKOUT_SECONDS', type: 'integer', default: 300, description: 'How long a failed-bind lockout lasts; it ends by itself.' },
  { name: 'NATS_PORT', type: 'integer', default: 4222, description: 'Client port of the embedded nats-server.' },
  { name: 'NATS_REPLICAS', type: 'integer', default: 1, description: 'Replicas for streams and KV buckets the product creates (3 on a cluster).' },
  { name: 'TEMPORAL_ADDRESS', type: 'string', description: 'External Temporal frontend host:port. When set, no Temporal dev server is spawned.' },
  { name: 'TEMPORAL_NAMESPACE', type: 'string', default: 'default', description: 'Temporal namespace.' },
  { name: 'TEMPORAL_TASK_QUEUE', type: 'string', default: 'sms', description: 'Task queue of the product workflows.' },
  { name: 'TEMPORAL_PORT', type: 'integer', default: 7233, description: 'gRPC port of the embedded Temporal dev server.' },
  { name: 'TEMPORAL_UI_PORT', type: 'integer', default: 8233, description: 'Web UI port of the embedded Temporal dev server.' },
  { name: 'CLICKHOUSE_URL', type: 'string', description: 'External ClickHouse HTTP endpoint (e.g. http://clickhouse:8123), or chdb+http://127.0.0.1:<port> for the embedded chdb of another process of this machine (started with --serve-clickhouse=<port>). When unset, ClickHouse runs embedded via chdb in $DATA_DIR/clickhouse.' },
  { name: 'CLICKHOUSE_USER', type: 'string', default: 'default', description: 'ClickHouse user (external server only).' },
  { name: 'CLICKHOUSE_PASSWORD', type: 'string', default: '', description: 'ClickHouse password (external server); with CLICKHOUSE_URL=chdb+http://..., the owner\'s serve secret; on the owner (--serve-clickhouse), the secret it requires (empty: generated into $DATA_DIR/clickhouse-serve.secret).' },
  { name: 'CLICKHOUSE_DATABASE', type: 'string', default: 'sms_platform', description: 'ClickHouse database the product owns; created by the migrations.' },
  { name: 'PROCESS_LAYOUT', type: 'string', default: 'split', description: 'With every role (`npm start`): `split` runs the lifecycle worker and the carrier connector (with the simulator) in two child processes beside the gateways, so each has a core; `single` runs every role in one process.' },
  { name: 'BACKGROUND_NICE', type: 'integer', default: 10, description: 'CPU priority of the background processes `npm start` runs (the lifecycle and carrier processes, the embedded Temporal dev server) and, in the process with the embedded ClickHouse, of its background threads and the history writer\'s inserts: their nice value, 1-19, so that the gateways (and nats-server) get the CPU first while both have work; 0 = as the gateways.' },
  { name: 'RESTART_GIVE_UP_AFTER', type: 'integer', default: 8, description: 'Embedded engines and role processes of `npm start` that exit on their own are started again after 0.5 s, doubling to 30 s (a minute up starts over); after this many restarts in a row, each exiting within a minute, the stack stops with exit code 1, naming the process. At least 1.' },
  { name: 'LOG_LEVEL', type: 'string', default: 'info', description: 'pino log level: fatal, error, warn, info, debug, trace.' },
  { name: 'TRUST_PROXY', type: 'string', default: 'false', description: 'Which peers may set X-Forwarded-For (the client address of the rate limits, the failed-authentication counter and the console sign-in throttle), as Express\'s trust proxy: `false` (default: none, the TCP peer is the client), a hop count (`1`), or a comma-separated list of addresses, CIDRs and `loopback`, `linklocal`, `uniquelocal`; `true` trusts every peer (only when the port is reachable through the proxy alone).' },
  { name: 'HTTP_BODY_LIMIT_BYTES', type: 'integer', default: 1048576, description: 'Largest accepted request body; larger bodies get 413.' },
  { name: 'RATE_LIMIT_PER_MINUTE', type: 'integer', default: 6000, description: 'Default requests per minute per organization per endpoint.' },
  { name: 'RATE_LIMIT_BULK_PER_MINUTE', type: 'integer', default: 600, description: 'Default requests per minute per organization for POST /sms/bulk.' },
  { name: 'INGEST_BASE_PATH', type: 'string', default: '/ingest/v1', description: 'Base path of the ingestion API (spec 2 {ingest_base_url}).' },
  { name: 'AUDIENCE_BASE_PATH', type: 'string', default: '/audience/v1', description: 'Base path of the audience search and segment API (spec 3 §4.2).' },
  { name: 'AUDIENCE_FAIRNESS', type: 'boolean', default: true, description: 'Fair share of the audience search between organizations (docs/grammar-b.md "Fair share"): the statements of an organization over its equal share of the recent search cost, while another organization searches, run on a read lane of their own, one at a time, at a lower CPU priority. false: every search on one read lane, statements of a search in parallel.' },
  { name: 'AUDIENCE_COST_HALF_LIFE_SECONDS', type: 'integer', default: 10, description: 'Half-life of an organization\'s counted audience search cost (the elapsed time of its statements), at least 1.' },
  { name: 'AUDIENCE_ACTIVE_SECONDS', type: 'integer', default: 10, description: 'An organization with an audience statement running or ended within this many seconds is searching (counts for the equal share), at least 1.' },
  { name: 'AUDIENCE_HEAVY_MIN_COST_MS', type: 'integer', default: 2000, description: 'Below this decayed cost (milliseconds of statements) an organization is never treated as heavy; 0 or more.' },
  { name: 'AUDIENCE_HEAVY_NICE', type: 'integer', default: 19, description: 'ClickHouse `os_thread_priority` (nice, 1-19) of a heavy organization\'s statements; 0 = unchanged. Applied only when the process has CAP_SYS_NICE (ClickHouse skips it otherwise).' },
  { name: 'AUDIENCE_HEAVY_MAX_THREADS', type: 'integer', default: 0, description: 'ClickHouse `max_threads` of a heavy organization\'s statements; 0 = unchanged.' },
  { name: 'INGEST_RATE_LIMIT_PER_MINUTE', type: 'integer', default: 6000, description: 'Default requests per minute per datasource per ingestion endpoint (one batch counts once).' },
  { name: 'INGEST_KEY_FILTER_MB', type: 'integer', default: 256, description: 'Memory (MiB) the ingest writer may give its in-memory filters of stored keys (event ids per datasource, contacts per project; about 2.4 bytes per key); a datasource or project whose filter does not fit is looked up in the table on every run. 0: no filters.' },
  { name: 'INGEST_MAX_LAG_SECONDS', type: 'integer', default: 10, description: 'Past this lag of the ingest writer (seconds), ingestion batches are answered 429 with Retry-After; 0: never.' },
  { name: 'MESSAGE_STATE_TTL_HOURS', type: 'integer', default: 168, description: 'How long the current state of a message stays in NATS KV (older ones are read from ClickHouse).' },
  { name: 'CHARGE_HOLD_REFUND_SECONDS', type: 'integer', default: 60, description: 'A charge whose messages (or lookup) never reached the stream, because the process taking it died, is refunded by the charge settler once the stream has moved this far past it (at least 30: a request gives up within 30 s).' },
  { name: 'DEMO_SEED', type: 'boolean', default: true, description: 'Create the demo organization on first start with an empty data store.' },
  { name: 'CARRIER_ROUTES', type: 'string', description: 'JSON array of upstream SMSC routes [{name, host, port, systemId, password, prefixes, window}]; unset = one route to the embedded carrier simulator.' },
  { name: 'SIMULATOR_LATENCY_MS', type: 'integer', default: 200, description: 'Delay of each step of the carrier simulator (submit → buffered → final); 0 for benchmarks.' },
  { name: 'MESSAGE_VALIDITY_SECONDS', type: 'integer', default: 172800, description: 'A message with no final carrier report within this time (default 48 h) becomes expired (code 1).' },
  { name: 'WEBHOOK_TIMEOUT_MS', type: 'integer', default: 5000, description: 'Timeout of one webhook attempt.' },
  { name: 'WEBHOOK_ALLOW_PRIVATE_TARGETS', type: 'boolean', default: false, description: 'Allow webhook URLs over http:// and to loopback, private, link-local and other non-public addresses (local development). Off: a webhook must be public HTTPS (spec 1 §6), checked when set and against the resolved address at each send.' },
  { name: 'WEBHOOK_RETRY_INITIAL_MS', type: 'integer', default: 1000, description: 'First retry interval of a failed DLR; doubles on each retry.' },
  { name: 'WEBHOOK_RETRY_MAX_MS', type: 'integer', default: 60000, description: 'Cap of the DLR retry interval.' },
  { name: 'WEBHOOK_RETRY_HOURS', type: 'integer', default: 25, description: 'How long a DLR is retried before it is dead-lettered (at least 24 h).' },
  { name: 'ADMIN_TOKEN', type: 'string', description: 'Bearer token of the admin API at /admin/v1 (provisioning over HTTP, docs/operations.md), at least 32 characters; unset: the admin API is off and every /admin path is a 404.' },
  { name: 'LIFECYCLE_BATCH_MAX_MESSAGES', type: 'integer', default: 500, description: 'Most messages one batch lifecycle workflow holds (docs/lifecycle.md); 1 = one workflow per message.' },
];

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(ENV_VARS.map((v) => [v.name, { type: v.type, ...(v.default !== undefined ? { default: v.default } : {}) }])),
  required: [],
} as const;

export interface Config {
  readonly dataDir: string;
  readonly http: { readonly host: string; readonly port: number; readonly bodyLimitBytes: number; readonly trustProxy: TrustProxy };
  readonly smpp: { readonly port: number; readonly maxSessionsPerSystemId: number; readonly window: number; readonly submitsPerSecond: number; readonly idleTimeoutSeconds: number; readonly concatTimeoutSeconds: number;
    readonly bindFailureWindowSeconds: number; readonly maxBindFailuresPerSystemId: number; readonly maxBindFailuresPerAddress: number; readonly bindLockoutSeconds: number };
  readonly simulator: { readonly port: number };
  readonly nats: { readonly url: string | undefined; readonly port: number; readonly replicas: number };
  readonly temporal: { readonly address: string | undefined; readonly namespace: string; readonly taskQueue: string; readonly port: number; readonly uiPort: number };
  readonly clickhouse: { readonly url: string | undefined; readonly user: string; readonly password: string; readonly database: string };
  readonly logLevel: string;
  readonly processLayout: 'split' | 'single';
  /** Nice value of the background processes (role processes, the embedded Temporal dev server); 0: not lowered. */
  readonly backgroundNice: number;
  /** Restarts in a row of an embedded engine or role process that keeps exiting, after which `npm start` stops (infra/restart-policy.ts). */
  readonly restartGiveUpAfter: number;
  readonly rateLimits: { readonly perMinute: number; readonly bulkPerMinute: number };
  readonly ingest: { readonly basePath: string; readonly ratePerMinute: number; readonly maxLagSeconds: number; readonly keyFilterBytes: number };
  readonly audience: { readonly basePath: string; readonly fairness: AudienceFairness };
  readonly messageStateTtlHours: number;
  readonly chargeHoldRefundSeconds: number;
  readonly demoSeed: boolean;
  readonly carrier: { readonly routes: readonly CarrierRoute[]; readonly simulatorLatencyMs: number };
  /** The admin API (/admin/v1): on when `token` is set. */
  readonly admin: { readonly token: string | undefined };
  readonly lifecycle: {
    readonly validitySeconds: number;
    readonly batchMaxMessages: number;
    readonly webhook: { readonly attemptTimeoutMs: number; readonly initialIntervalMs: number; readonly maximumIntervalMs: number; readonly retryHours: number; readonly allowPrivateTargets: boolean };
  };
}

/** Fair share of the audience search (stores/search-fairness.ts); `on` false: none. */
export interface AudienceFairness {
  readonly on: boolean;
  readonly halfLifeSeconds: number;
  readonly activeSeconds: number;
  readonly minCostMs: number;
  readonly heavyNice: number;
  readonly heavyMaxThreads: number;
}

/** Express's `trust proxy` setting: off, every peer, a hop count, or addresses, CIDRs and named ranges. */
export type TrustProxy = boolean | number | readonly string[];

/** The named ranges Express (proxy-addr) knows besides addresses and CIDRs. */
const TRUST_PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrCidr(text: string): boolean {
  return isIP(text) !== 0 || ipaddr.isValidCIDR(text);
}

/** TRUST_PROXY: `false` / `true`, a hop count, or a comma-separated list checked entry by entry. */
export function parseTrustProxy(text: string): TrustProxy {
  const value = text.trim();
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((e) => e.trim());
  const wrong = entries.filter((e) => !TRUST_PROXY_NAMES.has(e) && !isAddressOrCidr(e));
  if (wrong.length > 0) throw new ConfigError(`TRUST_PROXY: ${wrong.map((e) => JSON.stringify(e)).join(', ')} is not an address, a CIDR or one of loopback, linklocal, uniquelocal (or use false, true or a hop count)`);
  return entries;
}

/** One upstream SMSC and the destination prefixes (E.164 digits, '' = any) routed to it. */
export interface CarrierRoute {
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly systemId: string;
  readonly password: string;
  readonly prefixes: readonly string[];
  /** Outstanding submit_sm PDUs allowed on the bind. */
  readonly window: number;
}

const routeSchema = {
  type: 'array',
  minItems: 1,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'host', 'port', 'systemId', 'password'],
    properties: {
      name: { type: 'string', pattern: '^[a-z0-9_-]{1,32}$' },
      host: { type: 'string', minLength: 1 },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      systemId: { type: 'string', maxLength: 16 },
      password: { type: 'string', maxLength: 9 },
      prefixes: { type: 'array', items: { type: 'string', pattern: '^[0-9]*$' }, default: [''] },
      window: { type: 'integer', minimum: 1, maximum: 1000, default: 64 },
    },
  },
} as const;

function parseRoutes(text: string | undefined, simulatorPort: number): CarrierRoute[] {
  if (text === undefined) return [{ name: 'simulator', host: '127.0.0.1', port: simulatorPort, systemId: 'connector', password: 'simulatr', prefixes: [''], window: 64 }];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`CARRIER_ROUTES is not valid JSON: ${(err as Error).message}`);
  }
  const validate = new Ajv({ useDefaults: true, allErrors: true }).compile(routeSchema);
  if (!validate(parsed)) {
    throw new ConfigError(`CARRIER_ROUTES: ${(validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ')}`);
  }
  return parsed as CarrierRoute[];
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Raw = Record<string, string | number | boolean | undefined>;

function coerce(env: NodeJS.ProcessEnv): Raw {
  const raw: Raw = {};
  for (const spec of ENV_VARS) {
    const value = env[spec.name];
    if (value === undefined || value === '') continue;
    if (spec.type === 'integer') raw[spec.name] = /^-?\d+$/.test(value) ? Number(value) : value;
    else if (spec.type === 'boolean') raw[spec.name] = value === 'true' || value === '1' ? true : value === 'false' || value === '0' ? false : value;
    else raw[spec.name] = value;
  }
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const ajv = new Ajv({ useDefaults: true, allErrors: true });
  const validate = ajv.compile(schema);
  const raw = coerce(env);
  if (!validate(raw)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath.slice(1) || 'config'} ${e.message ?? 'is invalid'}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const str = (k: string): string => String(raw[k]);
  const opt = (k: string): string | undefined => (raw[k] === undefined ? undefined : String(raw[k]));
  const num = (k: string): number => Number(raw[k]);
  return deepFreeze({
    dataDir: resolve(str('DATA_DIR')),
    http: { host: str('HTTP_HOST'), port: num('HTTP_PORT'), bodyLimitBytes: num('HTTP_BODY_LIMIT_BYTES'), trustProxy: parseTrustProxy(str('TRUST_PROXY')) },
    smpp: {
      port: num('SMPP_PORT'), maxSessionsPerSystemId: num('SMPP_MAX_SESSIONS_PER_SYSTEM_ID'), window: num('SMPP_WINDOW'),
      submitsPerSecond: num('SMPP_SUBMITS_PER_SECOND'), idleTimeoutSeconds: num('SMPP_IDLE_TIMEOUT_SECONDS'), concatTimeoutSeconds: num('SMPP_CONCAT_TIMEOUT_SECONDS'),
      bindFailureWindowSeconds: atLeast('SMPP_BIND_FAILURE_WINDOW_SECONDS', num('SMPP_BIND_FAILURE_WINDOW_SECONDS'), 1),
      maxBindFailuresPerSystemId: atLeast('SMPP_BIND_MAX_FAILURES_PER_SYSTEM_ID', num('SMPP_BIND_MAX_FAILURES_PER_SYSTEM_ID'), 0),
      maxBindFailuresPerAddress: atLeast('SMPP_BIND_MAX_FAILURES_PER_ADDRESS', num('SMPP_BIND_MAX_FAILURES_PER_ADDRESS'), 0),
      bindLockoutSeconds: atLeast('SMPP_BIND_LOCKOUT_SECONDS', num('SMPP_BIND_LOCKOUT_SECONDS'), 1),
    },
    simulator: { port: num('SIMULATOR_PORT') },
    nats: { url: opt('NATS_URL'), port: num('NATS_PORT'), replicas: num('NATS_REPLICAS') },
    temporal: { address: opt('TEMPORAL_ADDRESS'), namespace: str('TEMPORAL_NAMESPACE'), taskQueue: str('TEMPORAL_TASK_QUEUE'), port: num('TEMPORAL_PORT'), uiPort: num('TEMPORAL_UI_PORT') },
    clickhouse: { url: opt('CLICKHOUSE_URL'), user: str('CLICKHOUSE_USER'), password: str('CLICKHOUSE_PASSWORD'), database: str('CLICKHOUSE_DATABASE') },
    logLevel: str('LOG_LEVEL'),
    processLayout: processLayout(str('PROCESS_LAYOUT')),
    backgroundNice: niceValue('BACKGROUND_NICE', num('BACKGROUND_NICE'), "background processes at the gateways' priority"),
    restartGiveUpAfter: atLeast('RESTART_GIVE_UP_AFTER', num('RESTART_GIVE_UP_AFTER'), 1),
    rateLimits: { perMinute: num('RATE_LIMIT_PER_MINUTE'), bulkPerMinute: num('RATE_LIMIT_BULK_PER_MINUTE') },
    ingest: { basePath: basePath('INGEST_BASE_PATH', str('INGEST_BASE_PATH')), ratePerMinute: num('INGEST_RATE_LIMIT_PER_MINUTE'), maxLagSeconds: num('INGEST_MAX_LAG_SECONDS'), keyFilterBytes: atLeast('INGEST_KEY_FILTER_MB', num('INGEST_KEY_FILTER_MB'), 0) * 1024 * 1024 },
    audience: {
      basePath: basePath('AUDIENCE_BASE_PATH', str('AUDIENCE_BASE_PATH')),
      fairness: {
        on: raw['AUDIENCE_FAIRNESS'] === true,
        halfLifeSeconds: atLeast('AUDIENCE_COST_HALF_LIFE_SECONDS', num('AUDIENCE_COST_HALF_LIFE_SECONDS'), 1),
        activeSeconds: atLeast('AUDIENCE_ACTIVE_SECONDS', num('AUDIENCE_ACTIVE_SECONDS'), 1),
        minCostMs: atLeast('AUDIENCE_HEAVY_MIN_COST_MS', num('AUDIENCE_HEAVY_MIN_COST_MS'), 0),
        heavyNice: niceValue('AUDIENCE_HEAVY_NICE', num('AUDIENCE_HEAVY_NICE')),
        heavyMaxThreads: atLeast('AUDIENCE_HEAVY_MAX_THREADS', num('AUDIENCE_HEAVY_MAX_THREADS'), 0),
      },
    },
    messageStateTtlHours: num('MESSAGE_STATE_TTL_HOURS'),
    chargeHoldRefundSeconds: atLeast('CHARGE_HOLD_REFUND_SECONDS', num('CHARGE_HOLD_REFUND_SECONDS'), 30),
    demoSeed: raw['DEMO_SEED'] === true,
    admin: { token: adminToken(opt('ADMIN_TOKEN')) },
    carrier: { routes: parseRoutes(opt('CARRIER_ROUTES'), num('SIMULATOR_PORT')), simulatorLatencyMs: num('SIMULATOR_LATENCY_MS') },
    lifecycle: {
      validitySeconds: num('MESSAGE_VALIDITY_SECONDS'),
      batchMaxMessages: num('LIFECYCLE_BATCH_MAX_MESSAGES'),
      webhook: { attemptTimeoutMs: num('WEBHOOK_TIMEOUT_MS'), initialIntervalMs: num('WEBHOOK_RETRY_INITIAL_MS'), maximumIntervalMs: num('WEBHOOK_RETRY_MAX_MS'), retryHours: num('WEBHOOK_RETRY_HOURS'), allowPrivateTargets: raw['WEBHOOK_ALLOW_PRIVATE_TARGETS'] === true },
    },
  });
}

function atLeast(name: string, value: number, min: number): number {
  if (value < min) throw new ConfigError(`${name} must be at least ${min}, got ${value}`);
  return value;
}

/** The admin token grants every organization: a short one could be guessed. */
export const ADMIN_TOKEN_MIN_LENGTH = 32;

function adminToken(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.length < ADMIN_TOKEN_MIN_LENGTH || /\s/.test(value)) {
    throw new ConfigError(`ADMIN_TOKEN must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters without spaces (it is ${value.length} long): generate one with \`openssl rand -hex 32\`, or unset it to turn the admin API off`);
  }
  return value;
}

function processLayout(value: string): 'split' | 'single' {
  if (value === 'split' || value === 'single') return value;
  throw new ConfigError(`PROCESS_LAYOUT must be "split" or "single", got "${value}"`);
}

/** A nice value: 0 (`zero` says what it leaves) to 19, Linux's lowest priority. */
function niceValue(name: string, value: number, zero = 'unchanged'): number {
  if (Number.isInteger(value) && value >= 0 && value <= 19) return value;
  throw new ConfigError(`${name} must be a nice value from 0 (${zero}) to 19 (lowest), got ${value}`);
}

/** A mount path: starts with "/", no trailing "/", plain path characters only. */
function basePath(name: string, value: string): string {
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(value)) throw new ConfigError(`${name} must be a path such as "/ingest/v1" (leading "/", no trailing "/"), got "${value}"`);
  return value;
}

function deepFreeze<T extends object>(value: T): T {
  for (const inner of Object.values(value)) if (inner && typeof inner === 'object') deepFreeze(inner as object);
  return Object.freeze(value);
}
