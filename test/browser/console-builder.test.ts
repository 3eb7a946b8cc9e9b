// The console's audience builder and the pages around it, in headless Chromium against the real
// stack (docs/console.md): a filter built with the builder answers the same contacts as the same
// JSON sent to POST /audience/v1/project/{p}/audience/search (spec 3 §4.2); JSON edited by hand
// redraws the builder and builder edits rewrite the JSON; save as segment (spec 3 §2.4 rule 3);
// the contact page; a project's opt-out list; a datasource and its token (spec 2 §5); a test SMS
// sent through the acceptance core (spec 1 §4) and charged. Then CSRF (403) and another
// organization's records (404) on every new route. Screenshots as test/browser/console.test.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { audienceId } from '../../core/ingest/audience-identity';
import { toMicros } from '../../core/money';
import { eventually } from '../../support/eventually';
import { createIngestTenant, INGEST, productToken, type IngestTenant } from '../support/ingest';
import { OperatorStore } from '../../stores/operator-store';
import { api, stack } from '../../support/stack';
import { addToken, balanceMicros, createTenant, V1, waitForToken, withAccounts, type Tenant } from '../../support/tenants';
import { ensureChromium } from '../../support/chromium';

jest.setTimeout(120_000);

const PAGE_LIMIT_BYTES = 200 * 1024;

interface Found { entities: Array<Record<string, unknown>>; total: number }

let browser: Browser;
let context: BrowserContext;
let page: Page;
let base: string;
let shots: string;
let t: IngestTenant;
let other: Tenant;
let searchToken: string;
let sms: { tokenId: string; token: string };
const alerts: string[] = [];

const searchApi = (body: unknown, project = t.projectId, token = searchToken) => api(`/audience/v1/project/${project}/audience/search`, { token, body });
const apiIds = (res: { body: unknown }): string[] => (res.body as Found).entities.map((e) => String(e['_user_id'])).sort();

async function visit(path: string): Promise<number> {
  const res = await page.goto(`${base}${path}`);
  const body = await res?.body();
  expect(body?.length ?? 0).toBeLessThan(PAGE_LIMIT_BYTES);
  return res?.status() ?? 0;
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

/** The filter object in the builder's JSON text area. */
async function filterJson(): Promise<Record<string, unknown>> {
  return JSON.parse(await page.inputValue('#audience-filter')) as Record<string, unknown>;
}

/** Waits for the live count to settle on `n`. */
async function countIs(n: number): Promise<void> {
  await page.locator(`#builder-count[data-total="${n}"]`).waitFor({ timeout: 15_000 });
}

/** The _user_id of each row of the results table. */
async function resultIds(): Promise<string[]> {
  return (await page.locator('#audience-results tr[data-user-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-user-id') ?? ''))).sort();
}

/** The CSRF token of the signed-in session (from any page's form). */
async function csrf(): Promise<string> {
  await visit('/datasources');
  return (await page.getAttribute('input[name=_csrf]', 'value')) ?? '';
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  shots = process.env['CONSOLE_SCREENSHOTS'] === '1' ? join(__dirname, '..', '..', 'docs', 'screenshots') : join(stack().dataDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  base = `${stack().httpUrl}/console`;
  [t, other] = await Promise.all([
    createIngestTenant({ attributes: { plan: 'string', score: 'number' }, events: { purchase: { amount: 'number', sku: 'string' } } }),
    createTenant({ name: 'Other Org' }),
  ]);
  searchToken = await productToken(t.orgId, t.projectId, ['audience:search']);
  sms = await addToken(t.orgId, 'api_sms', t.projectId);
  const contacts = [
    { _user_id: 'a1', _first_name: 'Anna', _email: 'anna@example.com', plan: 'gold', score: 42 },
    { _user_id: 'a2', _first_name: 'Bob', _email: 'bob@example.org', plan: 'silver', score: 7 },
    { _user_id: 'a3', _first_name: 'Cleo', plan: 'bronze', score: 1 },
  ];
  expect((await api(`${t.base}/contacts`, { token: t.token, body: contacts })).status).toBe(202);
  const events = [
    { _user_id: 'a1', _event_id: 'e1', _event_type: 'purchase', _event_parameters: { amount: 30, sku: 'A-1' } },
    { _user_id: 'a2', _event_id: 'e2', _event_type: 'purchase', _event_parameters: { amount: 5, sku: 'B-2' } },
  ];
  expect((await api(`${t.base}/events`, { token: t.token, body: events })).status).toBe(202);
  await eventually(() => searchApi({ version: '0.0.1', root: { type: 'group_event', event: 'purchase', children: [] } }), { what: 'both purchases to be searchable', until: (r) => r.status === 200 && (r.body as Found).total === 2, timeoutMs: 20_000 });
  await eventually(() => searchApi({ version: '0.0.1' }), { what: 'the three contacts to be searchable', until: (r) => r.status === 200 && (r.body as Found).total === 3, timeoutMs: 20_000 });
  await waitForToken(sms.token);
  // The operator store `admin operator create` uses, over the stack's NATS.
  const operator = await withAccounts(async (_a, _b, nats) => {
    const created = await (await OperatorStore.open(nats.nc)).create(t.orgId, `builder-${t.orgId.slice(-8)}@example.com`);
    return { email: created.operator.email, password: created.password };
  });
  browser = await chromium.launch({ executablePath, headless: true });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.on('dialog', (dialog) => {
    if (dialog.type() !== 'confirm') alerts.push(dialog.message());
    void dialog.accept();
  });
  await visit('/sign-in');
  await page.fill('input[name=email]', operator.email);
  await page.fill('input[name=password]', operator.password);
  await Promise.all([page.waitForURL((url) => !url.pathname.endsWith('/sign-in')), page.click('button[type=submit]')]);
}, 600_000);

afterAll(async () => {
  await browser?.close();
});

describe('console audience builder (spec 3 §2.3, §2.4, §4.2)', () => {
  test('a filter built with the builder answers the same contacts as the same JSON sent to the audience API', async () => {
    expect(await visit(`/audience?project=${t.projectId}`)).toBe(200);
    // Start from an empty filter: the builder offers to start one.
    await page.fill('#audience-filter', '{"version":"0.0.1","limit":50}');
    await page.click('button:has-text("Start a filter")');
    const root = page.locator('#builder-tree > .b-group');
    await root.locator(':scope > .b-head select[aria-label=join]').selectOption('or');
    // score ≥ 5 (an attribute condition with a number range)
    await root.locator(':scope > .b-head button:has-text("+ condition")').click();
    const score = root.locator(':scope > .b-row[data-node=attribute_condition]').first();
    await score.locator('select[aria-label=attribute]').selectOption('score');
    await score.locator('select[aria-label=operator]').selectOption('range-number');
    await score.locator('input[aria-label="lower number"]').fill('5');
    // or a purchase with amount ≥ 10 (an event group with a parameter condition)
    await root.locator(':scope > .b-head button:has-text("+ event")').click();
    const event = root.locator('.b-event').first();
    await event.locator('select[aria-label="event type"]').selectOption('purchase');
    await event.locator('button:has-text("+ parameter condition")').click();
    const amount = event.locator('.b-row[data-node=event_condition]').first();
    await amount.locator('select[aria-label=parameter]').selectOption('amount');
    await amount.locator('select[aria-label=operator]').selectOption('range-number');
    await amount.locator('input[aria-label="lower number"]').fill('10');
    expect((await filterJson())['root']).toEqual({
      type: 'group', join: 'or', children: [
        { type: 'attribute_condition', key: 'score', operator: 'range-number', values: { lowerNumber: 5, upperNumber: null } },
        { type: 'group_event', event: 'purchase', join: 'and', children: [{ type: 'event_condition', key: 'amount', operator: 'range-number', values: { lowerNumber: 10, upperNumber: null } }] },
      ],
    });
    await countIs(2);
    await shot('audience-builder');
    const filter = await filterJson();
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/console/audience') && r.request().method() === 'POST'), page.click('#builder-form button:has-text("Search")')]);
    expect(await page.textContent('#audience-total')).toMatch(/^2 contact/);
    const fromApi = await searchApi(filter);
    expect(fromApi.status).toBe(200);
    expect(await resultIds()).toEqual(apiIds(fromApi));
    expect(await resultIds()).toEqual(['a1', 'a2']);
    // The page after the search draws the same filter again.
    expect(await filterJson()).toEqual(filter);
  });

  test('JSON edited by hand redraws the builder; a builder edit rewrites the JSON; a bad filter is named', async () => {
    await visit(`/audience?project=${t.projectId}`);
    await page.fill('#audience-filter', JSON.stringify({ version: '0.0.1', root: { type: 'group', join: 'and', children: [{ type: 'attribute_condition', key: 'plan', operator: 'matches-string', values: ['gold'] }] } }));
    const row = page.locator('#builder-tree .b-row[data-node=attribute_condition]');
    await row.locator('.tag').waitFor();
    await expect(row.locator('select[aria-label=attribute]').inputValue()).resolves.toBe('plan');
    await expect(row.locator('select[aria-label=operator]').inputValue()).resolves.toBe('matches-string');
    expect(await row.locator('.tag').allTextContents()).toEqual(['gold×']);
    await countIs(1);
    await row.locator('.tag-input').fill('silver');
    await row.locator('.tag-input').press('Enter');
    expect((await filterJson())['root']).toEqual({ type: 'group', join: 'and', children: [{ type: 'attribute_condition', key: 'plan', operator: 'matches-string', values: ['gold', 'silver'] }] });
    await countIs(2);
    await row.locator('select[aria-label=match]').selectOption('&&');
    expect(((await filterJson())['root'] as { children: Array<{ values: unknown }> }).children[0]?.values).toEqual(['&&', 'gold', 'silver']);
    await countIs(0);
    // An operator the attribute's type does not take is refused by the same parser as the API.
    await page.fill('#audience-filter', JSON.stringify({ version: '0.0.1', root: { type: 'attribute_condition', key: '_email', operator: 'matches-number', values: [1] } }));
    await page.locator('#builder-count.bad').waitFor({ timeout: 15_000 });
    expect(await page.textContent('#builder-count')).toContain('matches-number');
    await page.fill('#audience-filter', '{ not json');
    await page.locator('#builder-json-error:has-text("Not valid JSON")').waitFor();
  });

  test('save as segment: listed on the segments page and by the API, opened again in the builder, used by a segment condition, deleted', async () => {
    const root = { type: 'attribute_condition', key: 'plan', operator: 'matches-string', values: ['gold', 'silver'] };
    await visit(`/audience?project=${t.projectId}`);
    await page.fill('#audience-filter', JSON.stringify({ version: '0.0.1', root }));
    await countIs(2);
    await page.fill('#save-segment input[name=slug]', 'paying');
    await page.fill('#save-segment input[name=name]', 'Paying customers');
    await Promise.all([page.waitForURL(/\/segments\?project=.*saved=paying/), page.click('#save-segment button')]);
    expect(await page.locator(`section[data-project="${t.projectId}"] tr[data-slug=paying]`).count()).toBe(1);
    expect(await page.textContent(`tr[data-slug=paying]`)).toContain('Paying customers');
    const listed = await api(`/audience/v1/project/${t.projectId}/segments`, { token: searchToken });
    expect(listed.body).toMatchObject({ entities: [{ slug: 'paying', name: 'Paying customers', root }] });
    await shot('segments');
    await Promise.all([page.waitForURL(/segment=paying/), page.click('tr[data-slug=paying] a')]);
    expect((await filterJson())['root']).toEqual(root);
    expect(await page.inputValue('#save-segment input[name=slug]')).toBe('paying');
    // A segment condition over it, picked in the builder.
    await page.fill('#audience-filter', '{"version":"0.0.1","root":{"type":"group","join":"and","children":[]}}');
    await page.click('#builder-tree button:has-text("+ segment")');
    const segment = page.locator('#builder-tree .b-row[data-node=segment_condition]');
    await segment.locator('select[aria-label=segment]').selectOption('paying');
    await segment.locator('select[aria-label="in or not in"]').selectOption('in-segment-not');
    await countIs(1);
    const filter = await filterJson();
    expect(apiIds(await searchApi(filter))).toEqual(['a3']);
    // A refused segment is not stored and the form says why.
    await page.fill('#save-segment input[name=slug]', 'Not A Slug');
    const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/console/segments') && r.request().method() === 'POST'), page.click('#save-segment button')]);
    expect(refused.status()).toBe(400);
    expect(await page.textContent('.notice.error')).toContain('slug');
    await visit(`/segments?project=${t.projectId}`);
    await page.click('tr[data-slug=paying] button:has-text("Delete")');
    await page.locator('tr[data-slug=paying]').waitFor({ state: 'detached' });
    expect((await api(`/audience/v1/project/${t.projectId}/segments/paying`, { token: searchToken })).status).toBe(404);
  });

  test('the contact page shows its attributes, datasources and recent events', async () => {
    await visit(`/audience?project=${t.projectId}`);
    await page.fill('#audience-filter', JSON.stringify({ version: '0.0.1', root: { type: 'attribute_condition', key: '_user_id', operator: 'matches-string', values: ['a1'] } }));
    await countIs(1);
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/console/audience') && r.request().method() === 'POST'), page.click('#builder-form button:has-text("Search")')]);
    await Promise.all([page.waitForURL(/\/contacts\//), page.click('tr[data-user-id=a1] a')]);
    expect(page.url()).toBe(`${base}/projects/${t.projectId}/contacts/${audienceId(t.projectId, 'a1')}`);
    expect(await page.textContent('h1')).toBe('Contact a1');
    const attributes = (await page.textContent('#contact-attributes')) ?? '';
    expect(attributes).toContain('Anna');
    expect(attributes).toContain('gold');
    expect(await page.locator(`#contact-datasources a[href$="/datasources/${t.datasourceId}"]`).count()).toBe(1);
    const events = (await page.textContent('#contact-events')) ?? '';
    expect(events).toContain('purchase');
    expect(events).toContain('e1');
    expect(events).toContain('"amount":30');
    expect(events).not.toContain('e2');
    await shot('contact');
  });
});

describe('console: opt-outs, datasources, test SMS', () => {
  test('an opt-out is added, found by a search, seen by the API, and removed', async () => {
    const number = '+4915112345699';
    const apiList = async (): Promise<string[]> => ((await api(`${V1}/opt-outs`, { token: sms.token })).body as { entities: Array<{ number: string }> }).entities.map((e) => e.number);
    expect(await visit(`/opt-outs?project=${t.projectId}`)).toBe(200);
    await page.fill('#opt-out-add input[name=to]', number);
    await Promise.all([page.waitForURL(/\/opt-outs\?project=.*q=/), page.click('#opt-out-add button')]);
    expect(await page.locator(`tr[data-number="${number}"]`).count()).toBe(1);
    expect(await apiList()).toContain(number);
    await visit(`/opt-outs?project=${t.projectId}&q=000000`);
    expect(await page.locator(`tr[data-number="${number}"]`).count()).toBe(0);
    await page.fill('#opt-out-search input[name=q]', '12345699');
    await Promise.all([page.waitForURL(/q=12345699/), page.click('#opt-out-search button')]);
    expect(await page.locator(`tr[data-number="${number}"]`).count()).toBe(1);
    await shot('opt-outs');
    await page.click(`tr[data-number="${number}"] button:has-text("Remove")`);
    await page.locator(`tr[data-number="${number}"]`).waitFor({ state: 'detached' });
    expect(await apiList()).not.toContain(number);
    // A number that is not one is refused with the reason, and nothing is added.
    await page.fill('#opt-out-add input[name=to]', '12');
    const [bad] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/console/opt-outs') && r.request().method() === 'POST'), page.click('#opt-out-add button')]);
    expect(bad.status()).toBe(400);
    expect(await apiList()).toEqual([]);
  });

  test('a datasource is created, then its token, shown once, which the ingestion API accepts', async () => {
    expect(await visit('/datasources')).toBe(200);
    await page.fill('#create-datasource input[name=name]', 'Console datasource');
    await page.selectOption('#create-datasource select[name=project]', t.projectId);
    await Promise.all([page.waitForURL(/\/datasources\/[^/]+$/), page.click('#create-datasource button')]);
    expect(await page.textContent('h1')).toBe('Datasource Console datasource');
    const datasourceId = page.url().split('/').pop() ?? '';
    const stored = await withAccounts(async (_a, _b, nats) => JSON.parse((await nats.kv.accounts.get(`datasource.${datasourceId}`))?.string() ?? '{}') as Record<string, unknown>);
    expect(stored).toMatchObject({ id: datasourceId, orgId: t.orgId, projectId: t.projectId, name: 'Console datasource' });
    await page.fill('#create-datasource-token input[name=name]', 'console ds token');
    await Promise.all([page.waitForURL(`${base}/tokens`), page.click('#create-datasource-token button')]);
    const value = (await page.textContent('#token-value')) ?? '';
    expect(value.length).toBeGreaterThan(20);
    await eventually(() => api(`${INGEST}/project/${t.projectId}/datasource/${datasourceId}/stream`, { token: value }), { what: 'the new datasource token to be accepted', until: (r) => r.status === 200 });
    // Limited to its datasource (spec 2 §5 rule 2): another datasource of the project is a 404.
    expect((await api(`${t.base}`, { token: value })).status).toBe(404);
  });

  test('a test SMS is priced, then sent through the acceptance core once confirmed, and charged', async () => {
    expect(await visit(`/tokens/${sms.tokenId}`)).toBe(200);
    await page.fill('#test-sms input[name=to]', '+4915112345678');
    await page.fill('#test-sms textarea[name=text]', 'console test message');
    const before = await balanceMicros(t.orgId);
    await Promise.all([page.waitForURL(/test-sms$/), page.click('#test-sms button')]);
    expect(await page.textContent('main')).toMatch(/1 part\(s\), 0\.075 EUR/);
    expect(await balanceMicros(t.orgId)).toBe(before);
    await shot('test-sms');
    await Promise.all([page.waitForURL(/\/messages\/[^/]+$/), page.click('#test-sms-confirm button:has-text("Send and charge")')]);
    const id = page.url().split('/').pop() ?? '';
    const sent = await api(`${V1}/sms/${id}`, { token: sms.token });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ entity: { id, to: '+4915112345678', text: 'console test message' } });
    expect(await balanceMicros(t.orgId)).toBe((before ?? 0) - toMicros(0.075));
    // A refused send (not a number) is shown with the reason and charges nothing.
    await visit(`/tokens/${sms.tokenId}`);
    await page.fill('#test-sms input[name=to]', 'nobody');
    const [refused] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/test-sms') && r.request().method() === 'POST'), page.click('#test-sms button')]);
    expect(refused.status()).toBe(422);
    expect(await page.textContent('#test-sms .notice.error')).toContain('to');
  });
});

describe('console builder pages: CSRF and one organization', () => {
  test('every new form refuses a POST without the CSRF token (403) and changes nothing', async () => {
    const token = await csrf();
    expect(token.length).toBeGreaterThan(10);
    const posts: Array<[string, Record<string, string>]> = [
      ['/audience/count', { project: t.projectId, filter: '{"version":"0.0.1"}' }],
      ['/segments', { project: t.projectId, slug: 'csrf', filter: '{"version":"0.0.1","root":{"type":"group","children":[]}}' }],
      ['/segments/delete', { project: t.projectId, slug: 'csrf' }],
      ['/opt-outs', { project: t.projectId, to: '+4915112345600' }],
      ['/opt-outs/remove', { project: t.projectId, number: '+4915112345600' }],
      ['/datasources', { project: t.projectId, name: 'csrf' }],
      [`/tokens/${sms.tokenId}/test-sms`, { to: '+4915112345678', text: 'csrf' }],
      [`/tokens/${sms.tokenId}/test-sms/send`, { to: '+4915112345678', text: 'csrf' }],
    ];
    const balance = await balanceMicros(t.orgId);
    for (const [path, form] of posts) {
      expect([path, (await page.request.post(`${base}${path}`, { form })).status()]).toEqual([path, 403]);
      expect([path, (await page.request.post(`${base}${path}`, { form: { ...form, _csrf: token }, headers: { origin: 'https://evil.example' } })).status()]).toEqual([path, 403]);
    }
    expect((await api(`/audience/v1/project/${t.projectId}/segments/csrf`, { token: searchToken })).status).toBe(404);
    expect(((await api(`${V1}/opt-outs`, { token: sms.token })).body as { entities: unknown[] }).entities).toEqual([]);
    const names = await withAccounts(async (_a, _b, nats) => {
      const found: string[] = [];
      for await (const key of await nats.kv.accounts.keys('datasource.*')) found.push(JSON.parse((await nats.kv.accounts.get(key))?.string() ?? '{}').name as string);
      return found;
    });
    expect(names).not.toContain('csrf');
    expect(await balanceMicros(t.orgId)).toBe(balance);
  });

  test("another organization's project, segment, opt-out, contact and token are 404 on every new route, and left unchanged", async () => {
    const token = await csrf();
    const p = other.projectId;
    // The other organization's own records, made through its API tokens.
    const otherSearch = await productToken(other.orgId, p, ['audience:search']);
    await waitForToken(other.token);
    expect((await api(`/audience/v1/project/${p}/segments`, { token: otherSearch, body: { slug: 'theirs', root: { type: 'group', join: 'and', children: [] } } })).status).toBe(201);
    expect((await api(`${V1}/opt-outs`, { token: other.token, body: { to: '+4915112345601' } })).status).toBe(201);
    for (const path of [`/audience?project=${p}`, `/audience?project=${p}&segment=theirs`, `/segments?project=${p}`, `/opt-outs?project=${p}`,
      `/projects/${p}/contacts/${audienceId(p, 'a1')}`, `/projects/${t.projectId}/contacts/${audienceId(p, 'a1')}`, `/tokens/${other.tokenId}`]) {
      expect([path, await visit(path)]).toEqual([path, 404]);
    }
    const posts: Array<[string, Record<string, string>]> = [
      ['/audience', { project: p, filter: '{"version":"0.0.1"}' }],
      ['/audience/count', { project: p, filter: '{"version":"0.0.1"}' }],
      ['/segments', { project: p, slug: 'theirs', filter: '{"version":"0.0.1","root":{"type":"group","children":[]}}' }],
      ['/segments/delete', { project: p, slug: 'theirs' }],
      ['/opt-outs', { project: p, to: '+4915112345602' }],
      ['/opt-outs/remove', { project: p, number: '+4915112345601' }],
      ['/datasources', { project: p, name: 'not yours' }],
      [`/tokens/${other.tokenId}/test-sms`, { to: '+4915112345678', text: 'not yours' }],
      [`/tokens/${other.tokenId}/test-sms/send`, { to: '+4915112345678', text: 'not yours' }],
    ];
    const balance = await balanceMicros(other.orgId);
    for (const [path, form] of posts) {
      expect([path, (await page.request.post(`${base}${path}`, { form: { ...form, _csrf: token } })).status()]).toEqual([path, 404]);
    }
    const segment = await api(`/audience/v1/project/${p}/segments/theirs`, { token: otherSearch });
    expect(segment.body).toMatchObject({ entity: { slug: 'theirs', root: { type: 'group', join: 'and', children: [] } } });
    expect(((await api(`${V1}/opt-outs`, { token: other.token })).body as { entities: Array<{ number: string }> }).entities.map((e) => e.number)).toEqual(['+4915112345601']);
    expect(await balanceMicros(other.orgId)).toBe(balance);
    expect(alerts).toEqual([]);
  });
});

describe('console: scheduled messages (DESIGN §4 Scheduling)', () => {
  const later = (): string => new Date(Date.now() + 3_600_000).toISOString();
  const status = async (id: string, token: string): Promise<string> => ((await api(`${V1}/sms/${id}`, { token })).body as { entity?: { status: string } }).entity?.status ?? '';

  test('a scheduled message is listed and canceled from the console (refunded); CSRF is required and another organization\'s is a 404', async () => {
    const before = await balanceMicros(t.orgId);
    const sent = await api(`${V1}/sms`, { token: sms.token, body: { from: 'Console', to: '+4915112345677', text: 'later', scheduledAt: later() } });
    expect(sent.status).toBe(201);
    const id = (sent.body as { entity: { id: string; status: string } }).entity.id;
    expect((sent.body as { entity: { status: string } }).entity.status).toBe('scheduled');
    expect(await balanceMicros(t.orgId)).toBe((before ?? 0) - toMicros(0.075));
    const theirs = await api(`${V1}/sms`, { token: other.token, body: { from: 'Other', to: '+4915112345676', text: 'theirs', scheduledAt: later() } });
    expect(theirs.status).toBe(201);
    const theirId = (theirs.body as { entity: { id: string } }).entity.id;
    // The list is the message log (history writer): it shows the message within moments.
    await eventually(async () => { await visit('/scheduled'); return page.locator(`tr[data-message="${id}"]`).count(); }, { what: 'the scheduled message to be listed', until: (n) => n === 1 });
    expect(await page.locator(`tr[data-message="${theirId}"]`).count()).toBe(0);
    await shot('scheduled');
    const token = await csrf();
    expect((await page.request.post(`${base}/scheduled/${id}/cancel`, { form: {} })).status()).toBe(403);
    expect((await page.request.post(`${base}/scheduled/${theirId}/cancel`, { form: { _csrf: token } })).status()).toBe(404);
    expect(await status(id, sms.token)).toBe('scheduled');
    expect(await status(theirId, other.token)).toBe('scheduled');
    await visit('/scheduled');
    await Promise.all([page.waitForURL(/canceled=/), page.click(`tr[data-message="${id}"] button:has-text("Cancel")`)]);
    expect(await page.textContent('.notice')).toContain(id);
    await eventually(() => status(id, sms.token), { what: 'the message to be canceled', until: (s) => s === 'canceled' });
    expect(await balanceMicros(t.orgId)).toBe(before);
    // Once canceled it can no longer be: a 409 page.
    expect((await page.request.post(`${base}/scheduled/${id}/cancel`, { form: { _csrf: token } })).status()).toBe(409);
    expect(await status(theirId, other.token)).toBe('scheduled');
  });
});
