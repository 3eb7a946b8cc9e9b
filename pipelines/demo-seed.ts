// First start on an empty data store: a demo organization with funds, SMS and lookup prices,
// an api_sms token (with SMPP credentials) and a legacy token, written to $DATA_DIR/demo.json
// and printed with a ready-to-paste curl command. Later starts find and reuse it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KV } from '@nats-io/kv';
import { PRODUCT_SCOPES } from '../core/accounts';
import { toMicros } from '../core/money';
import type { AccountStore } from '../stores/account-store';
import type { BalanceLedger } from '../stores/balance-ledger';
import { DatasourceStore } from '../stores/datasource-store';
import type { OperatorStore } from '../stores/operator-store';

const MARKER_KEY = 'meta.demo';

/** Per-segment SMS prices (EUR) of the demo price profile. */
export const DEMO_SMS_PRICES: Readonly<Record<string, number>> = {
  AT: 0.065, BE: 0.07, CH: 0.06, CZ: 0.045, DE: 0.075, DK: 0.05, ES: 0.055, FI: 0.06, FR: 0.07, GB: 0.04,
  IE: 0.06, IT: 0.065, NL: 0.07, NO: 0.055, PL: 0.035, PT: 0.04, SE: 0.05, US: 0.01, CA: 0.01, BR: 0.03,
  MX: 0.035, IN: 0.005, AU: 0.045, JP: 0.07,
};
export const DEMO_LOOKUP_PRICE = 0.005;
export const DEMO_BALANCE = 100;

export interface DemoCredentials {
  readonly organization: string;
  readonly project: string;
  readonly token: string;
  readonly tokenId: string;
  readonly legacyToken: string;
  readonly smpp: { readonly systemId: string; readonly password: string };
  readonly currency: string;
  readonly createdAt: string;
  /** The demo datasource and its token (ingestion, spec 2); added to older data dirs on their next start. */
  readonly ingest?: { readonly project: string; readonly datasource: string; readonly token: string };
  /** A product token with every scope (ingest, audience search, aggregations); added like `ingest`. */
  readonly audience?: { readonly token: string };
  /** The demo organization's console operator (docs/console.md); added like `ingest`. */
  readonly console?: { readonly email: string; readonly password: string };
}

export async function ensureDemo(deps: { accounts: AccountStore; balances: BalanceLedger; kv: KV; dataDir: string }): Promise<{ demo: DemoCredentials; created: boolean } | undefined> {
  const file = join(deps.dataDir, 'demo.json');
  const marker = await deps.kv.get(MARKER_KEY);
  if (marker && marker.operation === 'PUT' && marker.length > 0) {
    return existsSync(file) ? { demo: JSON.parse(readFileSync(file, 'utf8')) as DemoCredentials, created: false } : undefined;
  }
  // Claim the seed first so that two processes starting together create one organization.
  try {
    await deps.kv.create(MARKER_KEY, JSON.stringify('seeding'));
  } catch {
    return undefined;
  }
  const org = await deps.accounts.createOrg({ name: 'Demo Org', currency: 'EUR', smppEnabled: true });
  const project = await deps.accounts.createProject(org.id, 'Demo project');
  const api = await deps.accounts.createToken({ kind: 'api_sms', orgId: org.id, projectId: project.id, name: 'demo api_sms token' });
  const legacy = await deps.accounts.createToken({ kind: 'legacy', orgId: org.id, name: 'demo legacy token' });
  const smpp = await deps.accounts.issueSmppCredentials(api.token.id);
  await deps.balances.set(org.id, { currency: 'EUR', availableMicros: toMicros(DEMO_BALANCE) });
  for (const [country, price] of Object.entries(DEMO_SMS_PRICES)) {
    await deps.accounts.setPrice(org.id, 'sms', country, { country, currency: 'EUR', priceMicros: toMicros(price) });
    await deps.accounts.setPrice(org.id, 'lookup', country, { country, currency: 'EUR', priceMicros: toMicros(DEMO_LOOKUP_PRICE) });
  }
  const demo: DemoCredentials = {
    organization: org.id,
    project: project.id,
    token: api.value,
    tokenId: api.token.id,
    legacyToken: legacy.value,
    smpp: { systemId: smpp.systemId, password: smpp.password },
    currency: 'EUR',
    createdAt: new Date().toISOString(),
  };
  mkdirSync(deps.dataDir, { recursive: true });
  writeFileSync(file, `${JSON.stringify(demo, null, 2)}\n`, { mode: 0o600 });
  await deps.kv.put(MARKER_KEY, JSON.stringify(org.id));
  return { demo, created: true };
}

const INGEST_MARKER_KEY = 'meta.demo.ingest';
const AUDIENCE_MARKER_KEY = 'meta.demo.audience';
const CONSOLE_MARKER_KEY = 'meta.demo.console';
const ANALYTICS_MARKER_KEY = 'meta.demo.analytics';
export const DEMO_OPERATOR_EMAIL = 'demo@example.com';

/**
 * Adds what a demo created before ingestion and the audience filter existed lacks: the demo
 * datasource with its datasource token, and a product token with every scope. A KV marker per
 * addition makes two processes starting together add each once.
 */
export async function ensureDemoIngest(deps: { accounts: AccountStore; kv: KV; dataDir: string; operators?: OperatorStore }, demo: DemoCredentials): Promise<DemoCredentials> {
  let updated = demo;
  if (!updated.ingest && (await claim(deps.kv, INGEST_MARKER_KEY))) {
    const datasource = await new DatasourceStore(deps.kv, deps.accounts).create(demo.project, 'Demo datasource');
    const token = await deps.accounts.createToken({ kind: 'datasource', orgId: demo.organization, projectId: demo.project, datasourceId: datasource.id, name: 'demo datasource token' });
    updated = { ...updated, ingest: { project: demo.project, datasource: datasource.id, token: token.value } };
    await deps.kv.put(INGEST_MARKER_KEY, JSON.stringify(datasource.id));
  }
  if (!updated.audience && (await claim(deps.kv, AUDIENCE_MARKER_KEY))) {
    const token = await deps.accounts.createToken({ kind: 'product', orgId: demo.organization, projectId: demo.project, scopes: [...PRODUCT_SCOPES], name: 'demo product token (every scope)' });
    updated = { ...updated, audience: { token: token.value } };
    await deps.kv.put(AUDIENCE_MARKER_KEY, JSON.stringify(token.token.id));
  }
  // A demo product token created before analytics:read existed gets it (docs/analytics.md); new ones have every scope.
  if (updated.audience && (await claim(deps.kv, ANALYTICS_MARKER_KEY))) {
    // A demo token revoked or removed since is left alone: there is nothing to give the scope to.
    const token = await deps.accounts.resolveToken(updated.audience.token).catch(() => undefined);
    if (token && !token.revokedAt && token.kind === 'product') await deps.accounts.addTokenScopes(token.id, ['analytics:read']);
    await deps.kv.put(ANALYTICS_MARKER_KEY, JSON.stringify(token?.id ?? null));
  }
  if (deps.operators && !updated.console && (await claim(deps.kv, CONSOLE_MARKER_KEY))) {
    const created = await deps.operators.create(demo.organization, DEMO_OPERATOR_EMAIL);
    updated = { ...updated, console: { email: created.operator.email, password: created.password } };
    await deps.kv.put(CONSOLE_MARKER_KEY, JSON.stringify(created.operator.id));
  }
  if (updated !== demo) writeFileSync(join(deps.dataDir, 'demo.json'), `${JSON.stringify(updated, null, 2)}\n`, { mode: 0o600 });
  return updated;
}

async function claim(kv: KV, key: string): Promise<boolean> {
  try {
    await kv.create(key, JSON.stringify('seeding'));
    return true;
  } catch {
    return false; // another process seeds it, or did before
  }
}

/** One POSIX shell word for `text`, whatever it contains (single quotes, spaces, `$`). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function demoBanner(demo: DemoCredentials, httpPort: number, file: string, ingestBasePath = '/ingest/v1', audienceBasePath = '/audience/v1'): string {
  const base = `http://localhost:${httpPort}/transactional/v1`;
  const ingest = demo.ingest
    ? [
      'Ingest a contact and an event (datasource token):',
      `  curl -s -X POST http://localhost:${httpPort}${ingestBasePath}/project/${demo.ingest.project}/datasource/${demo.ingest.datasource}/stream/events \\`,
      `       -H 'Authorization: Bearer ${demo.ingest.token}' -H 'Content-Type: application/json' \\`,
      `       -d '[{"_user_id":"ada","_event_id":"evt-1","_event_type":"purchase","_event_parameters":{"amount":42},"_user_data":{"_email":"ada@example.com"}}]'`,
    ]
    : [];
  const audience = demo.audience
    ? [
      'Search the audience (product token with every scope):',
      `  curl -s -X POST http://localhost:${httpPort}${audienceBasePath}/project/${demo.project}/audience/search -H 'Authorization: Bearer ${demo.audience.token}' \\`,
      `       -H 'Content-Type: application/json' -d '{"version":"0.0.1","root":{"type":"group","join":"and","children":[{"type":"attribute_condition","key":"_email","operator":"exists","values":[]}]},"limit":10}'`,
    ]
    : [];
  // The README's shell lines, with this file's path (DATA_DIR may be anything): paste to get $TOKEN, $I and $IT.
  const path = shellQuote(file);
  const shell = [
    `Shell variables for the README's examples (read from ${file}):`,
    `  TOKEN=$(node -p 'require(process.argv[1]).token' ${path})`,
    ...(demo.ingest
      ? [
        `  I=$(node -p 'const d=require(process.argv[1]).ingest; "${ingestBasePath}/project/"+d.project+"/datasource/"+d.datasource+"/stream"' ${path})`,
        `  IT=$(node -p 'require(process.argv[1]).ingest.token' ${path})`,
      ]
      : []),
  ];
  return [
    '',
    `Demo organization ${demo.organization} (credentials in ${file})`,
    `  api_sms token: ${demo.token}`,
    `  legacy token:  ${demo.legacyToken}`,
    `  SMPP:          system_id=${demo.smpp.systemId} password=${demo.smpp.password}`,
    '',
    ...shell,
    '',
    'Send a message:',
    `  curl -s -X POST ${base}/sms -H 'Authorization: Bearer ${demo.token}' -H 'Content-Type: application/json' \\`,
    `       -d '{"from":"Demo","to":"+4915112345678","text":"Hello from the demo"}'`,
    'Balance:',
    `  curl -s ${base}/organization/account -H 'Authorization: Bearer ${demo.token}'`,
    ...ingest,
    ...audience,
    ...(demo.console ? ['', `Web console: http://localhost:${httpPort}/console  (email ${demo.console.email}, password ${demo.console.password})`] : []),
    '',
  ].join('\n');
}
