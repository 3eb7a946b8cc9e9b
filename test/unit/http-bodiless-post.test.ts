// A POST whose OpenAPI operation declares no requestBody (POST /transactional/v1/sms/{id}/cancel,
// DESIGN §4 Scheduling) takes an empty body as sent by Twilio-style clients: no Content-Type and
// Content-Length 0, or no length at all. Other POSTs keep their rule: an empty body is a 400 "not
// JSON", a body without a JSON Content-Type a 415. In-process over the real app (test/support/sms-world.ts).
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openApiDocument } from '../../gateways/http/openapi';
import { createHttpApp, SMS_API_BASE, type SmsServices } from '../../gateways/http/app';
import { postQueryNames } from '../../gateways/http/query-guard';
import type { SmsMessage } from '../../core/sms/message';
import { createLogger } from '../../infra/logger';
import { SmsWorld, TOKEN } from '../support/sms-world';

const ID = '019a0000-0000-7000-8000-000000000001';

function message(): SmsMessage {
  const at = '2026-11-26T10:00:00.000Z';
  return {
    id: ID, orgId: 'org-1', projectId: 'project-1', tokenId: 't1', source: 'http', clientId: null, status: 'canceled', statusCode: 0,
    from: 'TestCo', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678', charsCount: 5, text: 'Hello', deliveredText: 'Hello',
    messagesCount: 1, encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 75_000, priceUserMicros: 75_000,
    currency: 'EUR', createdAt: at, chargedAt: at, scheduledAt: '2026-11-27T10:00:00.000Z', sentAt: null, deliveredAt: null, updatedAt: at,
  } as SmsMessage;
}

describe('DESIGN §4 Scheduling: a bodiless POST (no requestBody in /openapi.json) accepts an empty body', () => {
  const cancels: string[] = [];
  let server: Server;
  let port: number;

  beforeAll(async () => {
    const world = new SmsWorld();
    const { config, engines } = world.appParts();
    const services = {
      acceptance: world.acceptance,
      scheduledCancel: { cancel: async (_scope: unknown, id: string) => { cancels.push(id); return message(); } },
    } as unknown as SmsServices;
    server = createHttpApp({ config, engines, services, log: createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent') }).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A raw POST: exactly the headers given, the body written as is. */
  const post = (path: string, headers: Record<string, string>, body = ''): Promise<{ status: number; json: unknown }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, ...headers } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => { text += chunk; });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown }));
      });
      req.on('error', reject);
      req.end(body);
    });
  const cancelPath = `${SMS_API_BASE}/sms/${ID}/cancel`;

  test.each([
    ['no Content-Type, Content-Length: 0', { 'content-length': '0' }],
    ['no Content-Type, no Content-Length', {}],
    ['Content-Type application/json, Content-Length: 0', { 'content-type': 'application/json', 'content-length': '0' }],
  ])('POST .../sms/{id}/cancel with %s → 200 with the canceled message', async (_name, headers) => {
    cancels.splice(0);
    const res = await post(cancelPath, headers);
    expect(res).toEqual({ status: 200, json: { entity: expect.objectContaining({ id: ID, status: 'canceled' }) } });
    expect(cancels).toEqual([ID]);
  });

  test('a body sent to the bodiless cancel is still read as before: not JSON → 415, broken JSON → 400, nothing canceled', async () => {
    cancels.splice(0);
    expect((await post(cancelPath, { 'content-type': 'text/plain', 'content-length': '2' }, 'hi')).status).toBe(415);
    expect((await post(cancelPath, { 'content-type': 'application/json', 'content-length': '1' }, '{')).status).toBe(400);
    expect(cancels).toEqual([]);
  });

  test('a POST whose operation takes a body keeps its rule: POST /sms with an empty body → 400 { title, status, detail }', async () => {
    const res = await post(`${SMS_API_BASE}/sms`, { 'content-length': '0' });
    expect(res).toEqual({ status: 400, json: { title: 'Bad Request', status: 400, detail: expect.any(String) } });
  });

  test('the bodiless POSTs are read from /openapi.json: the cancel (and its legacy mirror), no other', () => {
    const table = postQueryNames(openApiDocument({ ingest: '/ingest/v1', audience: '/audience/v1' }, { admin: true }), { [SMS_API_BASE]: '' });
    expect([...table.bodiless].sort()).toEqual(['/sms/:id/cancel', `${SMS_API_BASE}/sms/:id/cancel`]);
  });
});
