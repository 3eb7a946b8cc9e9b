// The web console in a real browser (headless Chromium from Debian's package, driven by
// playwright-core) against the real stack: sign in, tokens, webhook and test DLR, a message's
// timeline to `delivered`, the log filter, revocation; CSRF, cross-organization and XSS checks.
// Screenshots of each page go to a temporary folder, or to docs/screenshots with CONSOLE_SCREENSHOTS=1.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { KV_KEYS } from '../../core/bus/names';
import { connectTemporal } from '../../infra/temporal';
import { DatasourceStore } from '../../stores/datasource-store';
import { admin, api, stack } from '../../support/stack';
import { createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';
import { ensureChromium } from '../../support/chromium';
import { eventually } from '../../support/eventually';

const XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>';
const PAGE_LIMIT_BYTES = 200 * 1024;

let browser: Browser;
let context: BrowserContext;
let page: Page;
let receiver: WebhookReceiver;
let tenant: Tenant;
let other: Tenant;
let base: string;
let shots: string;
const alerts: string[] = [];
const credentials = { email: '', password: '' };
const state = { token: '', tokenId: '', secret: '', messageId: '' };

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: false });
}

/** Every console page stays small (issue 17: no page over ~200 KB). */
async function visit(path: string): Promise<number> {
  const res = await page.goto(`${base}${path}`);
  const body = await res?.body();
  expect(body?.length ?? 0).toBeLessThan(PAGE_LIMIT_BYTES);
  return res?.status() ?? 0;
}

beforeAll(async () => {
  const executablePath = ensureChromium();
  shots = process.env['CONSOLE_SCREENSHOTS'] === '1' ? join(__dirname, '..', '..', 'docs', 'screenshots') : join(stack().dataDir, 'screenshots');
  mkdirSync(shots, { recursive: true });
  base = `${stack().httpUrl}/console`;
  receiver = await startWebhookReceiver();
  [tenant, other] = await Promise.all([createTenant({ name: 'Console Org' }), createTenant({ name: 'Other Org' })]);
  await withAccounts(async (accounts, _b, nats) => { await new DatasourceStore(nats.kv.accounts, accounts).create(tenant.projectId, 'Shop events'); });
  const created = await admin<{ email: string; password: string }>('operator', 'create', '--org', tenant.orgId, '--email', `ops-${tenant.orgId.slice(-8)}@example.com`);
  Object.assign(credentials, { email: created.email, password: created.password });
  browser = await chromium.launch({ executablePath, headless: true });
  context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  page = await context.newPage();
  page.on('dialog', (dialog) => {
    if (dialog.type() !== 'confirm') alerts.push(dialog.message());
    void dialog.accept();
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
});

describe('console (issue 17): sign-in', () => {
  test('an unknown password is refused, and nothing under /console is served without a session', async () => {
    expect(await visit('/projects')).toBe(200);
    expect(page.url()).toBe(`${base}/sign-in`);
    await page.fill('input[name=email]', credentials.email);
    await page.fill('input[name=password]', 'not-the-password');
    const [res] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/sign-in') && r.request().method() === 'POST'), page.click('button[type=submit]')]);
    expect(res.status()).toBe(401);
    expect(await page.textContent('.notice')).toContain('wrong');
  });

  test('the operator signs in; the session cookie is HttpOnly and SameSite=Strict; CSP is set', async () => {
    await visit('/sign-in');
    await shot('sign-in');
    await page.fill('input[name=email]', credentials.email);
    await page.fill('input[name=password]', credentials.password);
    await Promise.all([page.waitForURL(`${base}/dashboard`), page.click('button[type=submit]')]);
    const cookie = (await context.cookies()).find((c) => c.name === 'console_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    const res = await page.request.get(`${base}/projects`);
    expect(res.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await page.textContent('h1')).toBe('Home');
    await visit('/projects');
    expect(await page.textContent('h1')).toBe('Projects & tokens');
    await shot('projects');
  });
});

describe('console: tokens, webhook, messages', () => {
  test('a created token is shown once and authenticates', async () => {
    await visit('/projects');
    await page.fill('#create-token input[name=name]', 'checkout service');
    await page.selectOption('#create-token select[name=kind]', 'api_sms');
    await page.selectOption('#create-token select[name=project]', tenant.projectId);
    await Promise.all([page.waitForURL(`${base}/tokens`), page.click('#create-token button[type=submit]')]);
    state.token = (await page.textContent('#token-value')) ?? '';
    expect(state.token).toMatch(/^sms_[A-Za-z0-9_-]{43}$/);
    await shot('token-created');
    await page.click('text=Open checkout service');
    state.tokenId = page.url().split('/').pop() ?? '';
    expect(await page.content()).not.toContain(state.token);
    await eventually(async () => (await api(`${V1}/organization/account`, { token: state.token })).status, { what: 'the new token to authenticate', until: (status) => status === 200, timeoutMs: 5000 });
  });

  test('a webhook is set, and "send test DLR" shows the receiver\'s answer; the DLR verifies with standardwebhooks', async () => {
    await visit(`/tokens/${state.tokenId}`);
    await page.fill('#webhook input[name=url]', receiver.url);
    await Promise.all([page.waitForURL(`${base}/tokens/${state.tokenId}/webhook`), page.click('#webhook button[type=submit]')]);
    state.secret = (await page.textContent('#webhook-secret')) ?? '';
    expect(state.secret).toMatch(/^whsec_/);
    await visit(`/tokens/${state.tokenId}`);
    await shot('token');
    const before = receiver.received.length;
    await Promise.all([page.waitForURL(/webhook\/test$/), page.click('text=Send test DLR')]);
    expect(await page.textContent('#test-result')).toMatch(/answered 200 in \d+ ms/);
    await shot('test-dlr');
    const test = receiver.received[before];
    expect(test && new StandardWebhook(state.secret).verify(test.raw, test.headers as Record<string, string>)).toMatchObject({ status: 'delivered' });
  });

  test('a message sent with the API reaches `delivered` on its timeline, each webhook attempt shown', async () => {
    const sent = await api(`${V1}/sms`, { token: state.token, body: { from: 'Console', to: '+4915112345612', text: `hello ${XSS}` } });
    expect(sent.status).toBe(201);
    state.messageId = (sent.body as { entity: { id: string } }).entity.id;
    await eventually(async () => {
      expect(await visit(`/messages/${state.messageId}`)).toBe(200);
      const timeline = (await page.textContent('#timeline')) ?? '';
      expect(timeline).toContain('delivered (code');
      expect(timeline.slice(timeline.indexOf('delivered (code'))).toMatch(/HTTP 200, \d+ ms/);
    }, { what: 'the timeline to reach delivered with its webhook answer', timeoutMs: 30_000, intervalMs: 500 });
    expect(await page.textContent('#message-status')).toContain('delivered');
    // The workflow shown is the one that ran this message's lifecycle (per message or a batch).
    const workflowId = (await page.getAttribute('#workflow', 'data-workflow-id')) ?? '';
    const temporal = await connectTemporal({ address: stack().temporalAddress, namespace: stack().namespace });
    try {
      expect((await temporal.client.workflow.getHandle(workflowId).describe()).workflowId).toBe(workflowId);
    } finally {
      await temporal.close();
    }
    expect(await page.content()).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    await shot('message');
  });

  test('the log filters with both Grammar A forms and pages; a bad filter is a 400 with its reason', async () => {
    await visit(`/messages?${new URLSearchParams({ filter: 'status_eq=delivered' }).toString()}`);
    expect(await page.locator(`a[href$="/messages/${state.messageId}"]`).count()).toBe(1);
    await page.click('details.advanced summary');
    await page.fill('#filter', '{"filter":[{"field":"status","operator":"eq","value":"failed"}]}');
    await Promise.all([page.waitForURL((url) => url.search.includes('failed')), page.click('.filter button')]);
    expect(await page.locator(`a[href$="/messages/${state.messageId}"]`).count()).toBe(0);
    expect(await visit(`/messages?${new URLSearchParams({ filter: 'country_eq=DE&_start=0&_limit=1' }).toString()}`)).toBe(200);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await visit(`/messages?${new URLSearchParams({ filter: 'status_nope=1' }).toString()}`)).toBe(400);
    expect(await page.textContent('.notice.error')).toContain('status_nope');
    await visit(`/messages?${new URLSearchParams({ filter: 'status_eq=delivered' }).toString()}`);
    await shot('messages');
  });

  test('the other pages: balance and prices, dead letters with re-drive, datasources, audience search', async () => {
    expect(await visit('/billing')).toBe(200);
    expect(await page.textContent('#balance')).toMatch(/EUR/);
    await shot('billing');
    // A DLR whose retry window closed (as the lifecycle activities store it), re-driven from the page.
    const dead = { tokenId: state.tokenId, messageId: state.messageId, seq: 99, payload: { id: state.messageId, status: 'delivered', code: 0, eventAt: new Date().toISOString() }, reason: 'window closed', failedAt: new Date().toISOString() };
    await withAccounts(async (_a, _b, nats) => { await nats.kv.deadDlrs.put(KV_KEYS.deadDlr(state.tokenId, state.messageId, 99), JSON.stringify(dead)); });
    expect(await visit('/dead-letters')).toBe(200);
    expect(await page.textContent('main')).toContain('window closed');
    await shot('dead-letters');
    await Promise.all([page.waitForURL(/redriven=1/), page.click('main form button:has-text("Re-drive")')]);
    await receiver.waitFor((all) => all.some((d) => d.body['id'] === state.messageId && d.headers['webhook-id'] === `${state.messageId}.99`));
    await visit('/dead-letters');
    expect(await page.textContent('main')).not.toContain('window closed');
    expect(await visit('/datasources')).toBe(200);
    await page.click('text=Shop events');
    expect(await page.textContent('h1')).toBe('Datasource Shop events');
    await shot('datasource');
    expect(await visit('/audience')).toBe(200);
    await Promise.all([page.waitForResponse((r) => r.url().endsWith('/audience') && r.request().method() === 'POST'), page.click('main button[type=submit]')]);
    expect(await page.textContent('#audience-total')).toMatch(/^\d+ contact/);
    await shot('audience');
  });

  test('SMPP credentials are issued then revoked, and the webhook is removed: the token keeps neither', async () => {
    const token = async (): Promise<{ smpp: unknown; webhook: unknown }> => withAccounts(async (accounts) => accounts.getToken(state.tokenId));
    await withAccounts(async (accounts) => { await accounts.setOrgSmpp(tenant.orgId, true); });
    await visit(`/tokens/${state.tokenId}`);
    await Promise.all([page.waitForURL(`${base}/tokens/${state.tokenId}/smpp`), page.click('text=Issue SMPP credentials')]);
    expect(await page.textContent('#smpp-password')).toMatch(/\S{8,}/);
    expect((await token()).smpp).toBeDefined();
    await visit(`/tokens/${state.tokenId}`);
    await Promise.all([page.waitForURL(`${base}/tokens/${state.tokenId}#smpp`), page.click('text=Revoke credentials')]);
    expect((await token()).smpp).toBeNull();
    expect(await page.textContent('#smpp')).toContain('Issue SMPP credentials');
    await Promise.all([page.waitForURL(`${base}/tokens/${state.tokenId}#webhook`), page.click('text=Remove webhook')]);
    expect((await token()).webhook).toBeNull();
    expect(await page.textContent('#webhook')).toContain('No webhook');
  });

  test('a revoked token is refused by the API (401)', async () => {
    await visit(`/tokens/${state.tokenId}`);
    await Promise.all([page.waitForURL(`${base}/tokens/${state.tokenId}`), page.click(`form[action="/console/tokens/${state.tokenId}/revoke"] button`)]);
    expect(await page.textContent('main')).toContain('Revoked');
    await eventually(async () => (await api(`${V1}/organization/account`, { token: state.token })).status, { what: 'the revoked token to be refused (401)', until: (status) => status === 401, timeoutMs: 5000 });
  });
});

describe('console: security', () => {
  test('a change without the CSRF token, or from another origin, is refused (403) and changes nothing', async () => {
    const count = async (): Promise<number> => withAccounts(async (accounts) => (await accounts.listTokens({ orgId: tenant.orgId })).length);
    const before = await count();
    const missing = await page.request.post(`${base}/tokens`, { form: { kind: 'api_sms', project: tenant.projectId, name: 'csrf' } });
    expect(missing.status()).toBe(403);
    await visit('/projects');
    const csrf = await page.getAttribute('#create-token input[name=_csrf]', 'value');
    const foreign = await page.request.post(`${base}/tokens`, { form: { _csrf: csrf ?? '', kind: 'api_sms', project: tenant.projectId }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status()).toBe(403);
    expect(await count()).toBe(before);
  });

  test("another organization's token, message and project are 404", async () => {
    const sent = await api(`${V1}/sms`, { token: other.token, body: { from: 'Other', to: '+4915112345613', text: 'not yours' } });
    const id = (sent.body as { entity: { id: string } }).entity.id;
    expect(await visit(`/tokens/${other.tokenId}`)).toBe(404);
    expect(await visit(`/messages/${id}`)).toBe(404);
    expect(await visit(`/messages?${new URLSearchParams({ filter: `id_eq=${id}` }).toString()}`)).toBe(200);
    expect(await page.locator('tbody tr').count()).toBe(0);
    await visit('/audience');
    const csrf = await page.getAttribute('input[name=_csrf]', 'value');
    const search = await page.request.post(`${base}/audience`, { form: { _csrf: csrf ?? '', project: other.projectId, filter: '{}' } });
    expect(search.status()).toBe(404);
  });

  test('a value carrying markup is rendered as text (no script runs)', async () => {
    await visit('/projects');
    await page.fill('#create-token input[name=name]', XSS);
    await page.selectOption('#create-token select[name=kind]', 'legacy');
    await Promise.all([page.waitForURL(`${base}/tokens`), page.click('#create-token button[type=submit]')]);
    await visit('/projects');
    expect(await page.getByText(XSS, { exact: true }).count()).toBeGreaterThan(0);
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    expect(alerts).toEqual([]);
  });

  test('signing out ends the session: its cookie no longer opens a page', async () => {
    const cookie = (await context.cookies()).find((c) => c.name === 'console_session');
    await visit('/projects');
    await Promise.all([page.waitForURL(`${base}/sign-in`), page.click('nav button:has-text("Sign out")')]);
    const res = await fetch(`${base}/projects`, { headers: { cookie: `console_session=${cookie?.value ?? ''}` }, redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });
});
