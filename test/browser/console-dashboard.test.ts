// The console's home dashboard and message log in headless Chromium against the real stack
// (docs/console.md): the charts show the statistics GET /sms/stats answers for messages sent
// here, under the console's strict CSP; the log's filter controls build the Grammar A query GET /sms
// takes (a + number as %2B, dates from the reader's time zone as ISO UTC), with totals and a CSV
// export of the same rows; every page of the dashboard and the log fits 390 px without sideways
// scrolling and has no serious or critical axe-core violation. Screenshots of the dashboard and
// the filtered log go to a temporary folder, or to docs/screenshots with CONSOLE_SCREENSHOTS=1.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { audienceId } from '../../core/ingest/audience-identity';
import { eventually } from '../../support/eventually';
import { addDatasource } from '../support/ingest';
import { admin, api, stack } from '../../support/stack';
import { createTenant, V1, type Tenant } from '../../support/tenants';
import { ensureChromium } from '../../support/chromium';

const PAGE_LIMIT_BYTES = 200 * 1024;
/** The browser's time zone: not UTC, so a date picker's local time must be converted. */
const TIME_ZONE = 'America/New_York';
const STATUS_COLUMNS = ['delivered', 'failed', 'expired', 'rejected', 'error', 'canceled', 'unknown', 'pending'];
// Outcomes the carrier simulator fixes by the last two digits (docs/carrier.md): 00/01 delivered, 90 failed.
const MESSAGES = [
  { to: '+4915112345600', text: 'dash one' },
  { to: '+4915112345601', text: 'dash two' },
  { to: '+4915112345690', text: 'dash three' },
  { to: '+33612345600', text: 'dash four' },
];

type Row = Record<string, number | string | null> & { messages: number; delivered: number; pending: number };
type Entity = { id: string; to: string; status: string; createdAt: string; priceUser: number; text: string };

let browser: Browser;
let context: BrowserContext;
let page: Page;
let tenant: Tenant;
let base: string;
let shots: string;
const credentials = { email: '', password: '' };
const problems: string[] = [];
const ingested = { datasourceId: '' };

async function visit(p: Page, path: string): Promise<number> {
  const res = await p.goto(`${base}${path}`);
  expect((await res?.body())?.length ?? 0).toBeLessThan(PAGE_LIMIT_BYTES);
  return res?.status() ?? 0;
}

/** Records CSP violations and script errors of every page of a context (an init script runs outside the page's CSP). */
async function watch(ctx: BrowserContext): Promise<void> {
  await ctx.addInitScript({ content: "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));" });
  ctx.on('page', (p) => {
    p.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    p.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  });
}

async function violations(p: Page): Promise<string[]> {
  return p.evaluate<string[]>('window.__violations || []');
}

/** axe-core (npm), evaluated in the page over the DevTools protocol; the serious and critical violations. */
async function axe(p: Page): Promise<string[]> {
  const source = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await p.evaluate(source);
  const found = await p.evaluate<Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))",
  );
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** A chart's table as numbers: per row, its x and its values in column order. */
async function tableOf(p: Page, id: string): Promise<{ series: string[]; rows: Array<{ x: string; values: Array<number | null> }> }> {
  return p.evaluate(`(() => {
    const t = document.getElementById(${JSON.stringify(id)});
    const series = Array.from(t.tHead.querySelectorAll('th[data-series]')).map((h) => h.dataset.series);
    const rows = Array.from(t.tBodies[0].rows).map((r) => ({ x: r.dataset.x, values: Array.from(r.querySelectorAll('td')).map((c) => c.dataset.v === '' ? null : Number(c.dataset.v)) }));
    return { series, rows };
  })()`);
}

/** What uPlot holds for a chart: its data arrays (x first). */
async function chartData(p: Page, id: string): Promise<Array<Array<number | null>>> {
  return p.evaluate(`window.consoleCharts[${JSON.stringify(id)}].data.map((a) => Array.from(a))`);
}

async function narrowScroll(p: Page): Promise<number> {
  return p.evaluate<number>('document.scrollingElement.scrollWidth');
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  shots = process.env['CONSOLE_SCREENSHOTS'] === '1' ? join(__dirname, '..', '..', 'docs', 'screenshots') : join(stack().dataDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  base = `${stack().httpUrl}/console`;
  tenant = await createTenant({ name: 'Dashboard Org' });
  const created = await admin<{ email: string; password: string }>('operator', 'create', '--org', tenant.orgId, '--email', `dash-${tenant.orgId.slice(-8)}@example.com`);
  Object.assign(credentials, { email: created.email, password: created.password });
  browser = await chromium.launch({ executablePath, headless: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: TIME_ZONE, locale: 'en-US' });
  await watch(context);
  page = await context.newPage();
  // Messages with known outcomes and one opt-out, until the statistics count them all as final.
  for (const m of MESSAGES) expect((await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Dash', ...m } })).status).toBe(201);
  expect((await api(`${V1}/opt-outs`, { token: tenant.token, body: { to: '+4915112345677' } })).status).toBe(201);
  // Three contacts through the ingestion API, until GET /stream's usage counts them (the dashboard's source).
  const ds = await addDatasource(tenant);
  expect((await api(`${ds.base}/contacts`, { token: ds.token, body: [{ _user_id: 'u1' }, { _user_id: 'u2' }, { _user_id: 'u3' }] })).status).toBe(202);
  await eventually(async () => ((await api(ds.base, { token: ds.token })).body as { usage: { lastDay: { contacts: { accepted: number } } } }).usage.lastDay.contacts.accepted, {
    what: 'the ingest writer to apply 3 contacts', until: (n) => n === 3, timeoutMs: 60_000, intervalMs: 250,
  });
  ingested.datasourceId = ds.datasourceId;
  await eventually(async () => ((await api(`${V1}/sms/stats`, { token: tenant.token })).body as { entities: Row[] }).entities[0], {
    what: 'the statistics to count every message as final', until: (r) => r?.messages === MESSAGES.length && r.pending === 0, timeoutMs: 60_000, intervalMs: 250,
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
});

describe('console home dashboard (docs/console.md, "Home")', () => {
  test('sign-in lands on the dashboard', async () => {
    await visit(page, '/sign-in');
    await page.fill('input[name=email]', credentials.email);
    await page.fill('input[name=password]', credentials.password);
    await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type=submit]')]);
    expect(await page.textContent('h1')).toBe('Home');
  });

  test('the charts show what GET /sms/stats answers for the same range, drawn by uPlot under the CSP', async () => {
    expect(await visit(page, '/dashboard')).toBe(200);
    const from = (await page.getAttribute('.meta time', 'datetime')) ?? '';
    expect(from).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00\.000Z$/);
    const api24 = ((await api(`${V1}/sms/stats?${new URLSearchParams({ _group: 'hourly', createdAt_gte: from }).toString()}`, { token: tenant.token })).body as { entities: Row[] }).entities;
    expect(api24.reduce((s, r) => s + r.messages, 0)).toBe(MESSAGES.length);

    const status = await tableOf(page, 'chart-status');
    expect(status.series).toEqual(STATUS_COLUMNS);
    expect(status.rows).toHaveLength(24);
    // Every bucket the API has equals the table's row; the others are zero.
    for (const row of status.rows) {
      const apiRow = api24.find((r) => Date.parse(String(r['period'])) / 1000 === Number(row.x));
      expect(row.values).toEqual(STATUS_COLUMNS.map((s) => Number(apiRow?.[s] ?? 0)));
    }
    const sum = (col: string): number => status.rows.reduce((s, r) => s + (r.values[status.series.indexOf(col)] ?? 0), 0);
    expect(sum('delivered')).toBe(3);
    expect(sum('failed')).toBe(1);
    expect(await page.textContent('#total-messages')).toBe(String(MESSAGES.length));
    expect(await page.textContent('#total-delivered')).toBe('3');
    expect(await page.textContent('#total-optouts')).toBe('1');
    expect(await page.textContent('#total-rate')).toBe('75 %');

    // The chart holds the table's numbers (uPlot's data: x, then each series).
    await page.waitForSelector('[data-chart-for="chart-status"][data-rendered="true"] canvas');
    const data = await chartData(page, 'chart-status');
    expect(data[0]).toEqual(status.rows.map((r) => Number(r.x)));
    status.series.forEach((_s, i) => expect(data[i + 1]).toEqual(status.rows.map((r) => r.values[i])));
    for (const id of ['chart-rate', 'chart-spend', 'chart-inbound', 'chart-country', 'chart-ingest']) {
      expect(await page.locator(`[data-chart-for="${id}"][data-rendered="true"]`).count()).toBe(1);
    }
    // By country: DE 2 of 3 delivered, FR 1 of 1.
    const country = await tableOf(page, 'chart-country');
    expect(Object.fromEntries(country.rows.map((r) => [r.x, r.values]))).toEqual({ DE: [66.7, 3], FR: [100, 1] });
    // Spend: the sum of the messages' prices.
    const listed = ((await api(`${V1}/sms`, { token: tenant.token })).body as { entities: Entity[] }).entities;
    const spend = await tableOf(page, 'chart-spend');
    const smsSpend = spend.rows.reduce((s, r) => s + (r.values[0] ?? 0), 0);
    expect(smsSpend).toBeCloseTo(listed.reduce((s, e) => s + e.priceUser, 0), 6);
    // Ingestion: the datasource's 3 accepted contacts of the last 24 hours.
    const ingest = await tableOf(page, 'chart-ingest');
    expect(ingest.rows).toEqual([{ x: 'Second datasource', values: [3, 0] }]);
    expect(await page.getAttribute('#chart-ingest tbody a', 'href')).toBe(`/console/datasources/${ingested.datasourceId}`);
    // The writer's lag, from the metrics of the process that runs the ingest writer (the test stack's one product process).
    expect(await page.textContent('#writer-lag')).toMatch(/over [1-9]\d* stream messages/);
    const optOuts = await tableOf(page, 'chart-inbound');
    expect(optOuts.rows.reduce((s, r) => s + (r.values.at(-1) ?? 0), 0)).toBe(1);

    expect(await violations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });

  test('hovering a bucket shows its numbers; the bucket links into the log filtered to it', async () => {
    await visit(page, '/dashboard');
    await page.waitForSelector('[data-chart-for="chart-status"][data-rendered="true"] canvas');
    const status = await tableOf(page, 'chart-status');
    const index = status.rows.findIndex((r) => (r.values[0] ?? 0) > 0);
    const delivered = status.rows[index]?.values[0];
    // The cursor over that bucket: uPlot's legend shows each series' value there.
    const at = await page.evaluate<{ x: number; y: number }>(`(() => {
      const u = window.consoleCharts['chart-status'];
      const box = u.over.getBoundingClientRect();
      return { x: box.left + Math.min(box.width - 2, Math.max(2, u.valToPos(u.data[0][${index}], 'x'))), y: box.top + box.height / 2 };
    })()`);
    await page.mouse.move(at.x - 20, at.y);
    await page.mouse.move(at.x, at.y);
    const legend = await page.waitForFunction(`(() => {
      const u = window.consoleCharts['chart-status'];
      const texts = Array.from(document.querySelectorAll('[data-chart-for="chart-status"] .u-legend .u-series')).map((s) => s.textContent.trim());
      return u.cursor.idx === ${index} && texts;
    })()`);
    expect(((await legend.jsonValue()) as string[]).find((t) => t.startsWith('delivered'))).toBe(`delivered${String(delivered)}`);
    // A click on the bucket opens the log filtered to its period.
    await Promise.all([page.waitForURL(/\/messages\?filter=/), page.mouse.click(at.x, at.y)]);
    const period = new URLSearchParams(new URL(page.url()).searchParams.get('filter') ?? '');
    expect(Date.parse(period.get('createdAt_gte') ?? '') / 1000).toBe(Number(status.rows[index]?.x));
    expect(await page.textContent('#total-count')).toBe(String(status.rows[index]?.values.reduce<number>((a, v) => a + (v ?? 0), 0)));
    // The table (under "Numbers"): the bucket's delivered count links to exactly those messages.
    await visit(page, '/dashboard');
    await page.click('#chart-status-title ~ details.numbers summary');
    await Promise.all([page.waitForURL(/\/messages\?filter=/), page.click(`#chart-status tbody tr:nth-child(${index + 1}) td:nth-of-type(1) a`)]);
    const filter = new URL(page.url()).searchParams.get('filter') ?? '';
    expect(filter).toContain('status_eq=delivered');
    expect(await page.locator('tbody tr').count()).toBe(delivered);
  });

  test('the 30-day range groups by UTC day and its pages stay small', async () => {
    expect(await visit(page, '/dashboard?range=30d')).toBe(200);
    const status = await tableOf(page, 'chart-status');
    expect(status.rows).toHaveLength(30);
    expect(status.rows.reduce((s, r) => s + r.values.reduce<number>((a, v) => a + (v ?? 0), 0), 0)).toBe(MESSAGES.length);
    expect(await page.getAttribute('#chart-status tbody tr:last-child time', 'data-day')).toBe('');
    // A bucket's log link is in the page once (its header cell), not again on its row.
    expect(await page.locator('#chart-status tbody th a[data-bucket]').count()).toBe(30);
    expect(await page.locator('tr[data-href]').count()).toBe(0);
    await page.waitForSelector('[data-chart-for="chart-status"][data-rendered="true"] canvas');
    await visit(page, '/dashboard');
    await page.waitForSelector('[data-chart-for="chart-country"][data-rendered="true"] canvas');
    await page.screenshot({ path: join(shots, 'dashboard.png'), fullPage: true });
  });
});

describe('message log filters (docs/console.md, "Messages")', () => {
  test('the controls build the Grammar A query: the same rows as GET /sms with it, a + number as %2B, dates from the local time zone', async () => {
    await visit(page, '/messages');
    await page.selectOption('#log-filter select[name=status]', 'delivered');
    await page.fill('#log-filter input[name=to]', '+4915112345600');
    // 2020-03-01 10:30 in New York is 15:30 UTC (EST, UTC-5).
    await page.fill('#log-filter input[name=since_local]', '2020-03-01T10:30');
    await Promise.all([page.waitForURL(/\/messages\?filter=/), page.click('#log-filter button[type=submit]')]);
    const filter = new URL(page.url()).searchParams.get('filter') ?? '';
    expect(page.url()).toContain(encodeURIComponent('to_eq=%2B4915112345600'));
    expect(new URLSearchParams(filter).get('to')).toBeNull();
    expect(Object.fromEntries(new URLSearchParams(filter))).toEqual({ status_eq: 'delivered', to_eq: '+4915112345600', createdAt_gte: '2020-03-01T15:30:00.000Z' });
    const fromApi = ((await api(`${V1}/sms?${filter}`, { token: tenant.token })).body as { entities: Entity[] }).entities;
    expect(fromApi).toHaveLength(1);
    const ids = await page.evaluate<string[]>("Array.from(document.querySelectorAll('tbody tr td:first-child code')).map((c) => c.textContent)");
    expect(ids).toEqual(fromApi.map((e) => e.id));
    expect(await page.textContent('#total-count')).toBe('1');
    // The controls show the filter again, the picker in the reader's time zone.
    expect(await page.inputValue('#log-filter input[name=to]')).toBe('+4915112345600');
    expect(await page.inputValue('#log-filter input[name=since_local]')).toBe('2020-03-01T10:30');
    await page.screenshot({ path: join(shots, 'messages-filtered.png'), fullPage: true });
  });

  test('a filter with nothing matching says so, not "rows 1–0"', async () => {
    await visit(page, `/messages?${new URLSearchParams({ filter: 'to_eq=%2B4915100000000' }).toString()}`);
    expect(await page.textContent('main')).toContain('No results.');
    expect(await page.textContent('main')).not.toContain('rows 1–0');
    expect(await page.textContent('#total-count')).toBe('0');
  });

  test('CSV export holds the rows of the current filter', async () => {
    await visit(page, `/messages?${new URLSearchParams({ filter: 'country_eq=DE' }).toString()}`);
    const href = (await page.getAttribute('#export', 'href')) ?? '';
    const res = await page.request.get(new URL(href, base).toString());
    expect(res.status()).toBe(200);
    expect(res.headers()['content-type']).toContain('text/csv');
    expect(res.headers()['content-disposition']).toMatch(/^attachment; filename="messages-.*\.csv"$/);
    const lines = (await res.text()).trim().split('\r\n');
    expect(lines[0]).toBe('id,createdAt,from,to,status,statusCode,country,clientId,messagesCount,priceUser,currency,text');
    const fromApi = ((await api(`${V1}/sms?country_eq=DE`, { token: tenant.token })).body as { entities: Entity[] }).entities;
    const rows = lines.slice(1).map((l) => l.slice(1, -1).split('","'));
    expect(rows.map((r) => r[0]).sort()).toEqual(fromApi.map((e) => e.id).sort());
    for (const e of fromApi) expect(rows.find((r) => r[0] === e.id)).toEqual([e.id, e.createdAt, 'Dash', e.to, e.status, expect.any(String), 'DE', '', '1', String(e.priceUser), 'EUR', e.text]);
  });
});

describe('console layout and accessibility', () => {
  const pages = ['/dashboard', '/dashboard?range=30d', '/messages', `/messages?${new URLSearchParams({ filter: 'status_eq=delivered' }).toString()}`, '/projects', '/billing'];
  // The builder's pages (the contact and datasource pages named once the tenant exists).
  const builderPages = ['/audience', '/segments', '/opt-outs', '/scheduled', '/datasources'];
  const recordPages = (): string[] => [`/datasources/${ingested.datasourceId}`, `/projects/${tenant.projectId}/contacts/${audienceId(tenant.projectId, 'u1')}`];

  test('at 390 px wide no page scrolls sideways', async () => {
    const narrow = await browser.newContext({ viewport: { width: 390, height: 844 }, timezoneId: TIME_ZONE });
    try {
      await narrow.addCookies(await context.cookies());
      const p = await narrow.newPage();
      const message = ((await api(`${V1}/sms`, { token: tenant.token })).body as { entities: Entity[] }).entities[0]?.id ?? '';
      const wide: Array<{ path: string; width: number }> = [];
      for (const path of [...pages, `/messages/${message}`, ...builderPages, ...recordPages()]) {
        expect(await visit(p, path)).toBe(200);
        if (path.startsWith('/dashboard')) await p.waitForSelector('[data-chart-for="chart-status"][data-rendered="true"] canvas');
        const width = await narrowScroll(p);
        if (width > 390) wide.push({ path, width });
      }
      // The audience builder's results (a POST): every contact of the project.
      await visit(p, '/audience');
      await p.fill('#audience-filter', JSON.stringify({ version: '0.0.1', limit: 50 }));
      await Promise.all([p.waitForResponse((r) => r.url().endsWith('/console/audience') && r.request().method() === 'POST'), p.click('#builder-form button:has-text("Search")')]);
      expect(await p.locator('#audience-results tr[data-user-id]').count()).toBe(3);
      const width = await narrowScroll(p);
      if (width > 390) wide.push({ path: 'POST /audience', width });
      expect(wide).toEqual([]);
    } finally {
      await narrow.close();
    }
  });

  test('times are shown in the reader\'s time zone, the ISO form on hover; the console has a favicon', async () => {
    await visit(page, '/messages');
    const first = page.locator('tbody time').first();
    const iso = (await first.getAttribute('datetime')) ?? '';
    expect(await first.getAttribute('title')).toBe(iso);
    const spaces = (text: string | null): string => (text ?? '').replace(/\s/gu, ' ');
    expect(spaces(await first.textContent())).toBe(spaces(new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeStyle: 'medium', timeZone: TIME_ZONE }).format(new Date(iso))));
    const icon = await page.getAttribute('link[rel=icon]', 'href');
    expect((await page.request.get(new URL(icon ?? '', base).toString())).headers()['content-type']).toContain('image/svg+xml');
  });

  test.each([...pages, ...builderPages])('axe-core finds no serious or critical violation on %s', async (path) => {
    expect(await visit(page, path)).toBe(200);
    if (path.startsWith('/dashboard')) await page.waitForSelector('[data-chart-for="chart-status"][data-rendered="true"] canvas');
    expect(await axe(page)).toEqual([]);
    expect(await violations(page)).toEqual([]);
  });

  test('axe-core finds no serious or critical violation on a datasource\'s and a contact\'s page', async () => {
    for (const path of recordPages()) {
      expect(await visit(page, path)).toBe(200);
      expect({ path, found: await axe(page) }).toEqual({ path, found: [] });
    }
    expect(await violations(page)).toEqual([]);
  });
});
