// Tenant isolation of the audience search (spec 3 §4.2; docs/grammar-b.md): organization B's
// `GET /transactional/v1/sms` latency, alone and while organization A runs expensive audience
// filters in a loop from --loops concurrent clients, against the embedded stack (gateway-http
// + ingest-writer in one process, chdb in-process, as `npm start` runs them). A's filters:
// one `contains` of 1,000 × "zz" on a custom attribute (6 KB), and an OR group of three
// `contains` of 1,000 values of 100 characters; a 429 is retried after its Retry-After. Prints p50/p99 of B and A's answers by status,
// with machine and load, and writes them to bench/results/tenant-isolation.json (--out).
import { cpus, totalmem } from 'node:os';
import { benchArgs } from './cli-args';
import { toMicros } from '../core/money';
import { createLogger } from '../infra/logger';
import { connectNats } from '../infra/nats';
import { AccountStore } from '../stores/account-store';
import { BalanceLedger } from '../stores/balance-ledger';
import { DatasourceStore } from '../stores/datasource-store';
import { startStack } from '../support/stack';
import { loadAverage as load, percentile, writeResult } from './support/results';

const { values } = benchArgs({
  options: {
    requests: { type: 'string', default: '200' },
    loops: { type: 'string', default: '3' },
    contacts: { type: 'string', default: '30' },
    out: { type: 'string', default: 'tenant-isolation.json' },
    label: { type: 'string', default: '' },
  },
});
const REQUESTS = Number(values.requests);
const LOOPS = Number(values.loops);
const CONTACTS = Number(values.contacts);

const say = (line: string): void => { process.stderr.write(`[bench:tenants] ${line}\n`); };
const round = (x: number): number => Math.round(x * 10) / 10;

interface Tenants { readonly searchUrl: string; readonly searchToken: string; readonly stream: string; readonly dsToken: string; readonly smsToken: string }

async function tenants(natsUrl: string, httpUrl: string): Promise<Tenants> {
  const nats = await connectNats({ servers: natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'bench-tenants' }, createLogger('warn'));
  try {
    const accounts = new AccountStore(nats.kv.accounts);
    const a = await accounts.createOrg({ name: 'Org A (searches)' });
    const project = await accounts.createProject(a.id, 'a');
    const ds = await new DatasourceStore(nats.kv.accounts, accounts).create(project.id, 'a');
    const dsToken = (await accounts.createToken({ kind: 'datasource', orgId: a.id, projectId: project.id, datasourceId: ds.id })).value;
    const searchToken = (await accounts.createToken({ kind: 'product', orgId: a.id, projectId: project.id, scopes: ['audience:search'] })).value;
    const b = await accounts.createOrg({ name: 'Org B (SMS)', currency: 'EUR' });
    const bProject = await accounts.createProject(b.id, 'b');
    await accounts.setPrice(b.id, 'sms', 'DE', { country: 'DE', currency: 'EUR', priceMicros: toMicros(0.01) });
    await new BalanceLedger(nats.kv.balances).set(b.id, { currency: 'EUR', availableMicros: toMicros(1e6) });
    const smsToken = (await accounts.createToken({ kind: 'api_sms', orgId: b.id, projectId: bProject.id })).value;
    return {
      searchUrl: `${httpUrl}/audience/v1/project/${project.id}/audience/search`, searchToken,
      stream: `${httpUrl}/ingest/v1/project/${project.id}/datasource/${ds.id}/stream`, dsToken, smsToken,
    };
  } finally {
    await nats.close();
  }
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const zz = { version: '0.0.1', root: { type: 'attribute_condition', key: 'plan', operator: 'contains', values: Array(1000).fill('zz') } };
const wide = { version: '0.0.1', root: { type: 'group', join: 'or', children: [0, 1, 2].map(() => ({ type: 'attribute_condition', key: 'plan', operator: 'contains', values: Array.from({ length: 1000 }, (_, i) => `${i}`.padEnd(100, 'x')) })) } };

async function main(): Promise<void> {
  const stack = await startStack({ LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000000', INGEST_RATE_LIMIT_PER_MINUTE: '1000000000' }, (l) => process.stderr.write(l), ['gateway-http', 'ingest-writer']);
  try {
    const http = stack.info.httpUrl;
    const t = await tenants(stack.info.natsUrl, http);
    const post = (url: string, token: string, body: unknown) => fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await until('the datasource token', async () => (await fetch(t.stream, { headers: { authorization: `Bearer ${t.dsToken}` } })).status === 200);
    const contacts = Array.from({ length: CONTACTS }, (_, i) => ({ _user_id: `u${i}`, _email: `u${i}@example.com`, plan: ['gold', 'silver', 'free'][i % 3] }));
    if ((await post(`${t.stream}/contacts`, t.dsToken, contacts)).status !== 202) throw new Error('contacts refused');
    await until(`${CONTACTS} contacts searchable`, async () => {
      const res = await post(t.searchUrl, t.searchToken, { version: '0.0.1', limit: 1 });
      return res.status === 200 && ((await res.json()) as { total: number }).total === CONTACTS;
    });
    const smsHeaders = { authorization: `Bearer ${t.smsToken}`, 'content-type': 'application/json' };
    await until('the SMS token', async () => (await fetch(`${http}/transactional/v1/organization/account`, { headers: smsHeaders })).status === 200);
    for (let i = 0; i < 10; i++) await fetch(`${http}/transactional/v1/sms`, { method: 'POST', headers: smsHeaders, body: JSON.stringify({ from: 'Bench', to: `+49151123456${String(i).padStart(2, '0')}`, text: 'hi' }) });

    const listSms = async (n: number, progress = false): Promise<number[]> => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const started = performance.now();
        const res = await fetch(`${http}/transactional/v1/sms`, { headers: smsHeaders });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`GET /sms answered ${res.status}`);
        times.push(performance.now() - started);
        // A slow run shows each request as it ends.
        if (progress && (times[i] ?? 0) > 1000) say(`  GET /sms ${i + 1}/${n}: ${round(times[i] ?? 0)} ms`);
      }
      return times;
    };
    await listSms(20);
    const loadBefore = load();
    const quiet = await listSms(REQUESTS);
    say(`B alone: p50 ${round(percentile(quiet, 50))} ms, p99 ${round(percentile(quiet, 99))} ms (load ${loadBefore})`);

    // A searches in --loops concurrent loops until B is done.
    let running = true;
    const statuses: Record<string, number> = {};
    const searchTimes: number[] = [];
    const loop = async (k: number): Promise<void> => {
      for (let i = 0; running; i++) {
        const started = performance.now();
        const res = await post(t.searchUrl, t.searchToken, (i + k) % 2 === 0 ? zz : wide);
        await res.arrayBuffer();
        searchTimes.push(performance.now() - started);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        // A client that honours Retry-After (a 429 of the searches-in-flight bound).
        const retryAfter = Number(res.headers.get('retry-after') ?? 0);
        if (res.status === 429 && retryAfter > 0) await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
      }
    };
    const loops = Array.from({ length: LOOPS }, (_, k) => loop(k));
    const loadDuring = load();
    const busy = await listSms(REQUESTS, true);
    running = false;
    await Promise.all(loops);
    say(`B while A searches (${LOOPS} loops): p50 ${round(percentile(busy, 50))} ms, p99 ${round(percentile(busy, 99))} ms, max ${round(Math.max(...busy))} ms (load ${loadDuring} → ${load()})`);
    say(`A's searches: ${JSON.stringify(statuses)}, p50 ${round(percentile(searchTimes, 50))} ms, p99 ${round(percentile(searchTimes, 99))} ms`);
    const result = {
      label: values.label, date: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, memGiB: round(totalmem() / 2 ** 30) },
      conditions: { contacts: CONTACTS, requests: REQUESTS, searchLoops: LOOPS, loadBefore, loadDuring, loadAfter: load() },
      orgBListSms: {
        alone: { p50: round(percentile(quiet, 50)), p99: round(percentile(quiet, 99)), max: round(Math.max(...quiet)) },
        whileOrgASearches: { p50: round(percentile(busy, 50)), p99: round(percentile(busy, 99)), max: round(Math.max(...busy)) },
      },
      orgASearches: { statuses, count: searchTimes.length, p50: round(percentile(searchTimes, 50)), p99: round(percentile(searchTimes, 99)) },
    };
    say(`written to ${writeResult(values.out, result)}`);
  } finally {
    await stack.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
