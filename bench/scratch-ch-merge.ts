// scratch (not committed): ClickHouse thread CPU under a steady history-writer-like insert rate.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { openClickHouse, migrate } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';
import { MessageHistory } from '../stores/message-history';
import { newId } from '../core/ids';
import type { SmsMessage } from '../core/sms/message';
const [rows, everyMs, seconds, variant] = [Number(process.argv[2]), Number(process.argv[3]), Number(process.argv[4]), process.argv[5] ?? 'all'];
const msg = (i: number): SmsMessage => { const now = new Date().toISOString(); return { id: newId(), orgId: `org-${i % 7}`, projectId: 'p', tokenId: 't', source: 'http', clientId: null, status: 'queued', statusCode: null, from: 'Bench', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678', charsCount: 40, text: `Benchmark message ${i}`, deliveredText: `Benchmark message ${i}`, messagesCount: 1, encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 10000, priceUserMicros: 10000, currency: 'EUR', createdAt: now, chargedAt: now, scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: now }; };
const byName = (): Map<string, number> => { const m = new Map<string, number>(); for (const tid of readdirSync('/proc/self/task')) { const c = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim(); const st = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' '); m.set(c, (m.get(c) ?? 0) + (Number(st[11]) + Number(st[12])) * 10); } return m; };
async function main(): Promise<void> {
  const dir = `/tmp/chm/${variant}`; rmSync(dir, { recursive: true, force: true });
  const ch = await openClickHouse({ embeddedPath: dir, database: 'sms', user: '', password: '', url: undefined });
  await migrate(ch, createLogger('error'));
  const q = (query: string) => ch.client.command({ query });
  if (variant === 'noproj' || variant === 'none') await q('ALTER TABLE `sms`.`sms_messages` DROP PROJECTION by_status_country');
  if (variant === 'nomv' || variant === 'none') await q('DROP VIEW `sms`.`sms_versions_mv`');
  if (variant === 'compact') await q("ALTER TABLE `sms`.`sms_messages` MODIFY SETTING min_bytes_for_wide_part = 104857600, min_rows_for_wide_part = 1000000");
  const h = new MessageHistory(ch);
  await new Promise((r) => setTimeout(r, 1500));
  const before = byName(); let n = 0; const end = Date.now() + seconds * 1000;
  while (Date.now() < end) { const t = Date.now(); await h.insert(Array.from({ length: rows }, () => msg(n++))); await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (Date.now() - t)))); }
  const after = byName(); const out: Record<string, number> = {}; let chTotal = 0;
  for (const [k, v] of after) { const d = v - (before.get(k) ?? 0); if (d > 0 && k !== 'node') { out[k] = d; chTotal += d; } }
  console.log(JSON.stringify({ variant, rows, everyMs, seconds, inserted: n, chMsPerSecond: Math.round(chTotal / seconds), chUsPerRow: +((chTotal * 1000) / n).toFixed(1), nodeMs: (after.get('node') ?? 0) - (before.get('node') ?? 0), threads: out }));
  await ch.close();
}
main().catch((e) => { console.error(e); process.exit(1); });
