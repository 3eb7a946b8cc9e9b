// Reliability run (message lifecycle, spec 1 §3): every role in its own process; N messages sent
// through POST /sms/bulk while the worker and the HTTP gateway are killed with SIGKILL and
// nats-server is restarted; then every message that got a 201 must reach a final status and
// each of its transitions must reach the webhook at least once. Prints lost (must be 0) and
// duplicated DLRs; and audits the balance: once no charge is held open, it must equal the
// starting balance less exactly one charge per accepted message (a request killed between
// its charge and its publish is refunded by the charge settler). Scheduled sends (DESIGN §4
// Scheduling): `--scheduled` messages accepted before the faults with a scheduledAt a few seconds
// after the last one, a quarter of them canceled while the faults go on; none may be lost, none
// sent before its scheduledAt - 1 s (the eventAt of its `sent` DLR), no canceled one sent, and the
// balance counts no canceled one. Writes bench/results/reliability.json.
// Usage: npm run reliability [-- --messages 5000] [--bulk 10 (items per request; 1: POST /sms, 16 senders)] [--scheduled 200] [--out reliability.json]
//        npm run reliability -- --topology cluster   (the scale-out topology's faults: bench/reliability-cluster.ts)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { toMicros } from '../core/money';
import { createLogger } from '../infra/logger';
import { connectNats } from '../infra/nats';
import { BalanceLedger } from '../stores/balance-ledger';
import { sleep } from '../infra/supervisor';
import { freePort, startLocalEngines } from '../infra/local-engines';
import { removeData } from '../support/stack';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { createTenantAt } from './support/tenant';
import { runCluster } from './reliability-cluster';
import { writeResult } from './support/results';
import { ensureBuilt } from '../infra/paths';

const { values } = benchArgs({ options: { messages: { type: 'string', default: '5000' }, bulk: { type: 'string', default: '10' }, out: { type: 'string', default: 'reliability.json' }, timeout: { type: 'string', default: '900' }, topology: { type: 'string', default: 'embedded' }, scheduled: { type: 'string', default: '200' } } });
const SCHEDULED = Math.max(0, Number(values.scheduled));
/**
 * The faults' timeline starts this long after the run (the scheduled messages are accepted first),
 * whatever the acceptance took, so that the scheduled times fall after the last fault.
 */
const CHAOS_OFFSET_SECONDS = 15;
/** Scheduled messages are due this many seconds after the faults' start, spread over SCHEDULE_SPREAD_SECONDS: after the last fault (t≈22 s). */
const SCHEDULE_AT_SECONDS = 26;
const SCHEDULE_SPREAD_SECONDS = 6;
/** Every CANCEL_EVERY-th scheduled message is canceled, at t≈CANCEL_AT_SECONDS (between the worker's and the gateway's kill). */
const CANCEL_EVERY = 4;
const CANCEL_AT_SECONDS = 10;
const TOTAL = Number(values.messages);
const ROOT = join(__dirname, '..');
const REFUND_SECONDS = 30;
const BULK = Math.max(1, Math.min(100, Number(values.bulk)));
/** Single sends (POST /sms) come from more senders at once, so that some share a turn of the gateway (and a state record). */
const SENDERS = BULK === 1 ? 16 : 4;
/** Sending lasts about this long, past the last fault (nats-server restart at t≈22 s). */
const SEND_SECONDS = 28;
/** bench/support/tenant.ts: 0.01 EUR per DE message, one segment each. */
const PRICE_MICROS = 10_000;
const say = (line: string): void => { process.stderr.write(`[reliability ${new Date().toISOString().slice(11, 19)}] ${line}\n`); };

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sms-reliability-'));
  const log = createLogger('warn', { component: 'reliability' });
  const engines = await startLocalEngines(dir, log);

  const httpPort = await freePort();
  const env = {
    ...process.env, NATS_URL: engines.natsUrl, TEMPORAL_ADDRESS: engines.temporalAddress, HTTP_PORT: String(httpPort), HTTP_HOST: '127.0.0.1',
    SIMULATOR_PORT: String(await freePort()), SIMULATOR_LATENCY_MS: '20', LOG_LEVEL: 'error', DEMO_SEED: 'false',
    RATE_LIMIT_PER_MINUTE: '100000000', RATE_LIMIT_BULK_PER_MINUTE: '100000000', WEBHOOK_RETRY_MAX_MS: '5000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    CHARGE_HOLD_REFUND_SECONDS: String(REFUND_SECONDS),
  };
  const roles = new Map<string, ChildProcess>();
  const startRole = (role: string): void => {
    const child = spawn(process.execPath, [ensureBuilt(), `--role=${role}`], { cwd: ROOT, env: { ...env, DATA_DIR: join(dir, role) }, stdio: ['ignore', 'ignore', 'inherit'] });
    roles.set(role, child);
  };
  // ingest-writer: the one-per-deployment roles run with it (the charge settler among them).
  for (const role of ['simulator', 'carrier', 'worker', 'ingest-writer', 'gateway-http']) startRole(role);
  const base = `http://127.0.0.1:${httpPort}`;
  while (!(await fetch(`${base}/health`).then((r) => r.status === 200, () => false))) await sleep(250);
  say(`roles up as separate processes; data in ${dir}`);

  const receiver = await startWebhookReceiver();
  const tenant = await createTenantAt(env.NATS_URL, base, receiver.url);
  const accepted = new Map<string, string>(); // clientId → message id
  const started = Date.now();
  let retries = 0;

  // Scheduled sends, accepted before the faults (bulks of 10, retried with their clientIds).
  const scheduled = new Map<string, { id: string; at: string }>(); // clientId → message id, scheduledAt
  const post = async (path: string, body: unknown): Promise<Response | undefined> => fetch(`${base}/transactional/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }), signal: AbortSignal.timeout(20000) }).catch(() => undefined);
  for (let b = 0; b * 10 < SCHEDULED; b++) {
    const items = Array.from({ length: Math.min(10, SCHEDULED - b * 10) }, (_, i) => {
      const n = b * 10 + i;
      const at = new Date(started + (CHAOS_OFFSET_SECONDS + SCHEDULE_AT_SECONDS + (SCHEDULE_SPREAD_SECONDS * n) / Math.max(1, SCHEDULED)) * 1000).toISOString();
      return { from: 'Reliable', to: `+491512${String(b).padStart(5, '0')}${String(i % 80).padStart(2, '0')}`, text: `scheduled ${n}`, clientId: `s-${n}`, scheduledAt: at };
    });
    for (;;) {
      const res = await post('/sms/bulk', items);
      if (res?.status === 201) {
        const answer = (await res.json()) as { entities: Array<{ id: string; clientId: string; status: string; scheduledAt: string }> };
        for (const e of answer.entities) scheduled.set(e.clientId, { id: e.id, at: e.scheduledAt });
        break;
      }
      retries += 1;
      await sleep(500);
    }
  }
  say(`${scheduled.size} scheduled messages accepted in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (Date.now() > started + CHAOS_OFFSET_SECONDS * 1000) say(`warning: accepting them took longer than ${CHAOS_OFFSET_SECONDS} s; their times fall earlier in the faults' timeline`);
  await sleep(Math.max(0, started + CHAOS_OFFSET_SECONDS * 1000 - Date.now()));
  const chaosStart = Date.now();
  // A quarter canceled during the faults: 200, or 409 when a first attempt (its answer lost) did it.
  const canceled = new Set<string>();
  let cancelConflicts = 0;
  const cancels = (async () => {
    await sleep(Math.max(0, chaosStart + CANCEL_AT_SECONDS * 1000 - Date.now()));
    for (const [clientId, { id }] of scheduled) {
      if (Number(clientId.slice(2)) % CANCEL_EVERY !== 0) continue;
      for (let attempt = 0; ; attempt++) {
        const res = await post(`/sms/${id}/cancel`, {});
        if (res?.status === 200) { canceled.add(id); break; }
        if (res?.status === 409) {
          const state = (await (await fetch(`${base}/transactional/v1/sms/${id}`, { headers: { authorization: `Bearer ${tenant.token}` } })).json()) as { entity?: { status: string } };
          if (state.entity?.status === 'canceled') canceled.add(id);
          else cancelConflicts += 1;
          break;
        }
        retries += 1;
        await sleep(500);
      }
    }
    say(`${canceled.size} scheduled messages canceled (${cancelConflicts} had already left)`);
  })();

  const chaos = (async () => {
    await sleep(6000);
    say('kill -9 worker'); roles.get('worker')?.kill('SIGKILL'); await sleep(3000); startRole('worker'); say('worker restarted');
    await sleep(5000);
    say('kill -9 gateway-http'); roles.get('gateway-http')?.kill('SIGKILL'); await sleep(2000); startRole('gateway-http'); say('gateway-http restarted');
    await sleep(6000);
    say('restart nats-server'); await engines.restartNats(); say('nats-server back');
  })();

  // Destinations end in 00-79, which the simulator delivers. Bulks of 10 with stable clientIds, paced so that sending spans the
  // chaos (the gateway is killed while requests are in flight): a request that fails (gateway down, NATS down) is sent again with
  // the same clientIds, so it can never create a message twice.
  const bulks = Math.ceil(TOTAL / BULK);
  const paceMs = (SEND_SECONDS * 1000 * SENDERS) / bulks;
  let next = 0;
  const sender = async (): Promise<void> => {
    for (;;) {
      const b = next++;
      if (b >= bulks) return;
      const sentAt = Date.now();
      const items = Array.from({ length: Math.min(BULK, TOTAL - b * BULK) }, (_, i) => ({ from: 'Reliable', to: `+491511${String(b).padStart(5, '0')}${String(i % 80).padStart(2, '0')}`, text: `reliability ${b}/${i}`, clientId: `r-${b}-${i}` }));
      for (;;) {
        try {
          const single = BULK === 1;
          const res = await fetch(`${base}/transactional/v1/sms${single ? '' : '/bulk'}`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body: JSON.stringify(single ? items[0] : items), signal: AbortSignal.timeout(15000) });
          if (res.status === 201) {
            const answer = (await res.json()) as { entity?: { id: string; clientId: string }; entities?: Array<{ id: string; clientId: string }>; errors?: unknown[] };
            const body = { entities: answer.entities ?? (answer.entity ? [answer.entity] : []), errors: answer.errors ?? [] };
            for (const e of body.entities) accepted.set(e.clientId, e.id);
            if (body.errors.length > 0) say(`bulk ${b}: ${body.errors.length} item errors ${JSON.stringify(body.errors[0])}`);
            break;
          }
        } catch { /* gateway or NATS down: retry */ }
        retries += 1;
        await sleep(500);
      }
      await sleep(Math.max(0, paceMs - (Date.now() - sentAt)));
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  await chaos;
  await cancels;
  say(`${accepted.size} messages accepted in ${((Date.now() - started) / 1000).toFixed(0)} s (${retries} request retries)`);

  const got = (): Map<string, string[]> => {
    const byId = new Map<string, string[]>();
    for (const r of receiver.received) if (r.answered === 200) byId.set(String(r.body['id']), [...(byId.get(String(r.body['id'])) ?? []), String(r.body['status'])]);
    return byId;
  };
  const deadline = Date.now() + Number(values.timeout) * 1000;
  let finals = 0;
  while (Date.now() < deadline) {
    const byId = got();
    finals = [...accepted.values()].filter((id) => (byId.get(id) ?? []).includes('delivered')).length;
    const scheduledFinals = [...scheduled.values()].filter(({ id }) => (byId.get(id) ?? []).includes(canceled.has(id) ? 'canceled' : 'delivered')).length;
    if (finals === accepted.size && scheduledFinals === scheduled.size) break;
    say(`${finals}/${accepted.size} messages and ${scheduledFinals}/${scheduled.size} scheduled ones have their final DLR`);
    await sleep(5000);
  }
  // The audit: every accepted message has a final status (GET /sms/{id}) and every transition the
  // lifecycle recorded for it (GET /sms/{id}/dlrs) reached the webhook at least once.
  const byId = got();
  const finalStatuses = ['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown'];
  let lost = 0;
  let missingTransitions = 0;
  let duplicates = 0;
  const examples: string[] = [];
  const lostExamples: string[] = [];
  const headers = { authorization: `Bearer ${tenant.token}` };
  for (const id of accepted.values()) {
    const statuses = byId.get(id) ?? [];
    const current = (await (await fetch(`${base}/transactional/v1/sms/${id}`, { headers })).json()) as { entity?: { status: string } };
    const recorded = ((await (await fetch(`${base}/transactional/v1/sms/${id}/dlrs`, { headers })).json()) as { entities?: Array<{ status: string }> }).entities ?? [];
    if (!finalStatuses.includes(current.entity?.status ?? '') || !statuses.some((s) => finalStatuses.includes(s))) {
      lost += 1;
      if (lostExamples.length < 5) lostExamples.push(`${id}: GET /sms/{id} status ${current.entity?.status ?? 'none'}, DLRs received ${statuses.join('>') || 'none'}`);
    }
    const missing = recorded.map((t) => t.status).filter((s) => !statuses.includes(s));
    missingTransitions += missing.length;
    if (missing.length > 0 && examples.length < 5) examples.push(`${id}: recorded ${recorded.map((t) => t.status).join('>')}, received ${statuses.join('>')}`);
    duplicates += statuses.length - new Set(statuses).size;
  }
  // Scheduled: each one final (delivered, or canceled when it was), none sent before its time - 1 s, no canceled one sent.
  let scheduledLost = 0;
  let sentEarly = 0;
  let canceledSent = 0;
  let earliestMs = Infinity;
  for (const { id, at } of scheduled.values()) {
    const dlrs = receiver.received.filter((r) => r.answered === 200 && r.body['id'] === id);
    const current = (await (await fetch(`${base}/transactional/v1/sms/${id}`, { headers })).json()) as { entity?: { status: string } };
    const sent = dlrs.find((r) => r.body['status'] === 'sent');
    if (canceled.has(id)) {
      if (sent || current.entity?.status !== 'canceled') canceledSent += 1;
      if (!dlrs.some((r) => r.body['status'] === 'canceled')) scheduledLost += 1;
      continue;
    }
    if (!finalStatuses.includes(current.entity?.status ?? '') || !sent) {
      scheduledLost += 1;
      if (lostExamples.length < 5) lostExamples.push(`scheduled ${id}: status ${current.entity?.status ?? 'none'}, DLRs ${dlrs.map((r) => String(r.body['status'])).join('>') || 'none'}`);
      continue;
    }
    const early = Date.parse(String(sent.body['eventAt'])) - Date.parse(at);
    earliestMs = Math.min(earliestMs, early);
    if (early < -1000) sentEarly += 1;
  }
  say(`scheduled: ${scheduled.size} accepted, ${canceled.size} canceled, ${scheduledLost} lost, ${sentEarly} sent early (earliest sent DLR ${Number.isFinite(earliestMs) ? earliestMs : '-'} ms from its scheduledAt), ${canceledSent} canceled ones sent`);
  // The balance audit: every hold settled or refunded, then exactly one charge per accepted message (a canceled one refunded).
  const nats = await connectNats({ servers: engines.natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'reliability-audit' }, log);
  const ledger = new BalanceLedger(nats.kv.balances);
  const holdDeadline = Date.now() + (REFUND_SECONDS + 30) * 1000;
  let balance = await ledger.get(tenant.orgId);
  while (Object.keys(balance?.holds ?? {}).length > 0 && Date.now() < holdDeadline) {
    say(`${Object.keys(balance?.holds ?? {}).length} charges still held; waiting for the charge settler`);
    await sleep(5000);
    balance = await ledger.get(tenant.orgId);
  }
  await nats.close();
  const openHolds = Object.keys(balance?.holds ?? {}).length;
  const balanceDiffMicros = (balance?.availableMicros ?? 0) - (toMicros(1e9) - (accepted.size + scheduled.size - canceled.size) * PRICE_MICROS);
  say(`balance: ${openHolds} charges held, ${balanceDiffMicros} micros off the exact figure (${accepted.size} charges)`);
  for (const line of examples) say(`missing: ${line}`);
  for (const line of lostExamples) say(`lost: ${line}`);
  const result = { at: new Date().toISOString(), messagesRequested: TOTAL, itemsPerRequest: BULK, accepted: accepted.size, lost, missingTransitions, duplicatedDlrs: duplicates, openHolds, balanceDiffMicros, requestRetries: retries,
    scheduled: { accepted: scheduled.size, canceled: canceled.size, cancelConflicts, lost: scheduledLost, sentEarly, canceledSent, earliestSentVsScheduledMs: Number.isFinite(earliestMs) ? earliestMs : null }, seconds: Math.round((Date.now() - started) / 1000), chaos: ['kill -9 worker (t≈6 s)', 'kill -9 gateway-http (t≈14 s)', 'restart nats-server (t≈22 s)'] };
  const written = writeResult(values.out, result);
  process.stdout.write(`\naccepted ${result.accepted}, lost ${lost}, missing transitions ${missingTransitions}, duplicated DLRs ${duplicates}, balance off by ${balanceDiffMicros} micros with ${openHolds} charges held; scheduled ${scheduled.size} (${canceled.size} canceled): lost ${scheduledLost}, sent early ${sentEarly}, canceled sent ${canceledSent} (written to ${written})\n`);

  for (const child of roles.values()) child.kill('SIGTERM');
  await sleep(3000);
  for (const child of roles.values()) if (child.exitCode === null) child.kill('SIGKILL');
  await receiver.close();
  await engines.stop();
  const passed = lost === 0 && missingTransitions === 0 && balanceDiffMicros === 0 && openHolds === 0 && scheduledLost === 0 && sentEarly === 0 && canceledSent === 0;
  // A failed run keeps its data (JetStream, Temporal, ClickHouse) to be looked at.
  if (passed) removeData(dir, say);
  process.exit(passed ? 0 : 1);
}

const run = values.topology === 'cluster'
  ? () => runCluster({ messages: Number(values.messages), timeoutSeconds: Number(values.timeout) }).then((ok) => process.exit(ok ? 0 : 1))
  : main;
run().catch((err: unknown) => { process.stderr.write(`reliability run failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
