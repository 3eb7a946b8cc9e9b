// Console benchmark (the console's targets: "no page over ~200 KB, first render under 1 s on the embedded
// stack"): every page of the console opened in headless Chromium over a stack whose log holds
// --messages messages; per page the median over --runs of the server's answer (responseEnd),
// DOMContentLoaded, first contentful paint (of the runs that report one) and load, and the HTML size. Printed and written to
// bench/results/console.json with the machine's load.
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { benchArgs } from './cli-args';
import { chromium } from 'playwright-core';
import { ensureChromium } from '../support/chromium';
import { startStack } from '../support/stack';
import { OperatorStore } from '../stores/operator-store';
import { api } from '../support/stack';
import { createTenant, V1, withAccounts } from '../support/tenants';
import { writeResult } from './support/results';

const { values } = benchArgs({ options: { runs: { type: 'string', default: '5' }, messages: { type: 'string', default: '1000' } } });
const say = (line: string): void => { process.stderr.write(`[bench:console] ${line}\n`); };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main(): Promise<void> {
  const executablePath = ensureChromium();
  const stack = await startStack({ LOG_LEVEL: 'error', RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BULK_PER_MINUTE: '1000000000' });
  const file = join(stack.info.dataDir, 'stack.json');
  writeFileSync(file, JSON.stringify(stack.info));
  process.env['STACK_FILE'] = file;
  try {
    const tenant = await createTenant({ name: 'Bench Org', balance: 100_000 });
    const login = await withAccounts(async (_a, _b, nats) => (await OperatorStore.open(nats.nc)).create(tenant.orgId, 'bench@example.com'));
    const total = Number(values.messages);
    let lastId = '';
    for (let sent = 0; sent < total; sent += 100) {
      const items = Array.from({ length: Math.min(100, total - sent) }, (_, i) => ({ from: 'Bench', to: `+49151${String(10_000_000 + sent + i)}`, text: `bench ${sent + i}` }));
      const res = await api(`${V1}/sms/bulk`, { token: tenant.token, body: items });
      lastId = (res.body as { entities: Array<{ id: string }> }).entities.at(-1)?.id ?? lastId;
    }
    say(`${total} messages sent; waiting 5 s for the history writer`);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const browser = await chromium.launch({ executablePath, headless: true });
    const page = await (await browser.newContext()).newPage();
    const base = `${stack.info.httpUrl}/console`;
    await page.goto(`${base}/sign-in`);
    await page.fill('input[name=email]', 'bench@example.com');
    await page.fill('input[name=password]', login.password);
    await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type=submit]')]);
    const pages = ['/dashboard', '/dashboard?range=30d', '/projects', `/tokens/${tenant.tokenId}`, '/billing', '/messages', '/messages?filter=status_eq%3Ddelivered', `/messages?start=${Math.max(0, total - 50)}`, `/messages/${lastId}`, '/dead-letters', '/datasources', '/audience'];
    const rows: Array<Record<string, number | string>> = [];
    for (const path of pages) {
      const timing: Record<string, number[]> = { responseMs: [], domContentLoadedMs: [], firstPaintMs: [], loadMs: [] };
      let bytes = 0;
      for (let run = 0; run < Number(values.runs); run += 1) {
        const res = await page.goto(`${base}${path}`, { waitUntil: 'load' });
        bytes = (await res?.body())?.length ?? 0;
        // In the page (DOM timing types): the navigation entry and the first contentful paint.
        const t = await page.evaluate<Record<string, number>>(`(() => {
          const nav = performance.getEntriesByType('navigation')[0];
          const fcp = performance.getEntriesByName('first-contentful-paint')[0];
          return { responseMs: nav.responseEnd, domContentLoadedMs: nav.domContentLoadedEventEnd, firstPaintMs: fcp ? fcp.startTime : -1, loadMs: nav.loadEventEnd };
        })()`);
        for (const [k, v] of Object.entries(t)) timing[k]?.push(v);
      }
      const row = { page: path.replace(/[0-9a-f-]{36}/g, '{id}'), bytes, ...Object.fromEntries(Object.entries(timing).map(([k, v]) => [k, Math.round(median(v.filter((x) => x >= 0)) * 10) / 10])) };
      rows.push(row);
      say(JSON.stringify(row));
    }
    await browser.close();
    const result = { at: new Date().toISOString(), loadavg: loadavg().map((l) => Math.round(l * 100) / 100), messages: total, runs: Number(values.runs), pages: rows };
    const written = writeResult('console.json', result);
    console.table(rows);
    say(`load average ${result.loadavg.join(' ')}; written to ${written}`);
  } finally {
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
