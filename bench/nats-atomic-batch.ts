// Experiment (the acceptance path, bulk: docs/acceptance.md): the 100 message states of a bulk request written as 100 acked
// publishes (as infra/bus/accepted-queue.ts does) or as one JetStream atomic batch (ADR-50: no reply
// but on the commit, one ack), against a nats-server of its own from .tools/bin; 16 requests in
// flight; client and nats-server CPU per message, 3 interleaved rounds; written to
// bench/results/nats-atomic-batch.json. Measured 2026-11-23: the atomic batch costs the server
// about 2.5x per message and runs at a quarter of the rate, so the product keeps per-message
// publishes (docs/acceptance.md); the same with DISCARD=old.
// Usage: [DISCARD=old] node --import tsx bench/nats-atomic-batch.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, headers as natsHeaders, createInbox } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort, natsServerSpec } from '../infra/local-engines';
import { createLogger } from '../infra/logger';
import { Supervisor } from '../infra/supervisor';
import { processCpuMs } from './support/cpu';
import { writeResult } from './support/results';

const body = Buffer.from(JSON.stringify({ id: '0190f0f0-0000-7000-8000-000000000000', orgId: 'o', projectId: 'p', tokenId: 't', source: 'api', clientId: null, status: 'queued', statusCode: null, from: 'Bench', country: 'DE', to: '+4915112345678', normalizedTo: '4915112345678', charsCount: 40, text: 'Bulk benchmark item 1 with some text.....', deliveredText: 'Bulk benchmark item 1 with some text.....', messagesCount: 1, encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 40000, priceUserMicros: 40000, currency: 'EUR', createdAt: new Date().toISOString(), chargedAt: new Date().toISOString(), scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: new Date().toISOString() }));

async function main(): Promise<void> {
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-atomic-batch-'));
  const port = await freePort();
  const engines = new Supervisor(storeDir, createLogger('warn', { component: 'nats-atomic-batch' }));
  await engines.start(natsServerSpec({ storeDir: join(storeDir, 'js'), port }));
  const server = { pid: engines.pid('nats-server') };
  const nc = await connect({ servers: `127.0.0.1:${port}` });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'KV_m', subjects: ['$KV.m.>'], max_msgs_per_subject: 1, discard: (process.env['DISCARD'] ?? 'new') as never, allow_direct: true, allow_rollup_hdrs: true, allow_atomic: true } as never);
  const prefix = `${createInbox()}.`;
  const waiting = new Map<number, () => void>();
  nc.subscribe(`${prefix}*`, { callback: (_e, m) => { const id = Number(m.subject.slice(prefix.length)); const w = waiting.get(id); waiting.delete(id); if (m.data.length && JSON.parse(new TextDecoder().decode(m.data)).error) console.error(new TextDecoder().decode(m.data)); w?.(); } });
  let next = 0;
  let k = 0;
  const req = (subject: string, data: Uint8Array, h?: ReturnType<typeof natsHeaders>): Promise<void> => new Promise((resolve) => { const id = ++next; waiting.set(id, resolve); nc.publish(subject, data, h ? { reply: `${prefix}${id}`, headers: h } : { reply: `${prefix}${id}` }); });
  const perMessage = async (): Promise<void> => { await Promise.all(Array.from({ length: 100 }, () => req(`$KV.m.sms.${k++}`, body))); };
  const atomic = async (): Promise<void> => {
    const batch = `b${k}`;
    for (let i = 1; i < 100; i++) { const h = natsHeaders(); h.set('Nats-Batch-Id', batch); h.set('Nats-Batch-Sequence', String(i)); nc.publish(`$KV.m.sms.${k++}`, body, { headers: h }); }
    const h = natsHeaders(); h.set('Nats-Batch-Id', batch); h.set('Nats-Batch-Sequence', '100'); h.set('Nats-Batch-Commit', '1');
    await req(`$KV.m.sms.${k++}`, body, h);
  };
  const rounds: Array<{ round: number; variant: string; messagesPerSecond: number; clientUsPerMessage: number; serverUsPerMessage: number }> = [];
  for (const round of [1, 2, 3]) {
    for (const [name, fn] of [['per-message', perMessage], ['atomic', atomic]] as const) {
      const c0 = process.cpuUsage(); const s0 = processCpuMs(server.pid) ?? 0; const t0 = performance.now();
      let done = 0;
      await Promise.all(Array.from({ length: 16 }, async () => { while (done < 400) { done++; await fn(); } }));
      const ms = performance.now() - t0; const c = process.cpuUsage(c0); const s = (processCpuMs(server.pid) ?? 0) - s0;
      const msgs = done * 100;
      const figure = { round, variant: name, messagesPerSecond: Math.round((msgs / ms) * 1000), clientUsPerMessage: Number(((c.user + c.system) / msgs).toFixed(1)), serverUsPerMessage: Number(((s * 1000) / msgs).toFixed(1)) };
      rounds.push(figure);
      console.log(`round ${round} ${name.padEnd(12)} ${figure.messagesPerSecond} msg/s  client ${figure.clientUsPerMessage} µs/msg  server ${figure.serverUsPerMessage} µs/msg`);
    }
  }
  await nc.close();
  await engines.stopAll();
  rmSync(storeDir, { recursive: true, force: true });
  const file = `nats-atomic-batch${process.env['DISCARD'] === 'old' ? '-discard-old' : ''}.json`;
  console.log(`written to ${writeResult(file, { at: new Date().toISOString(), conditions: '16 requests of 100 messages in flight, 400 requests per variant and round; nats-server of its own; CPU from /proc', rounds })}`);
}
void main();
