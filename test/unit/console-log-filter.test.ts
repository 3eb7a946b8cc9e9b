// The console's message log (docs/console.md, "Messages"): the filter controls write a Grammar A
// URL query (a + number as %2B) and read it back; the CSV export's fields; an export of a filter
// matching more than EXPORT_LIMIT messages is refused with the count and reads no row. The
// dashboard's buckets and log links. In-process, over fake history and stats readers.
import type { Server } from 'node:http';
import express from 'express';
import type { Organization } from '../../core/accounts/types';
import type { ConsoleSession } from '../../core/console/operators';
import type { ConsoleServices } from '../../gateways/http/console/services';
import { buckets, logLink } from '../../gateways/http/console/pages/dashboard';
import { controlsFilter, controlsOf, csvField, EXPORT_LIMIT } from '../../gateways/http/console/pages/messages';
import { consoleRouter } from '../../gateways/http/console/router';

describe('message log controls', () => {
  test('the controls write a Grammar A URL query; + is %2B; a date without the page script counts as UTC', () => {
    const form: Record<string, string> = { status: 'delivered', to: '+4915112345600', country: 'de', clientId: '', since: '2026-03-01T15:30:00.000Z', until_local: '2026-03-02T10:00' };
    const text = controlsFilter((name) => form[name] ?? '');
    expect(text).toBe('status_eq=delivered&country_eq=DE&to_eq=%2B4915112345600&createdAt_gte=2026-03-01T15%3A30%3A00.000Z&createdAt_lt=2026-03-02T10%3A00%3A00Z');
    expect(new URLSearchParams(text).get('to_eq')).toBe('+4915112345600');
  });

  test('the controls read back the conditions they write, and tell when a filter has others', () => {
    expect(controlsOf('status_eq=failed&to_eq=%2B33612345600&_start=50')).toEqual({ values: { status: 'failed', to: '+33612345600' }, other: false });
    expect(controlsOf('status_eq=failed&text_contains=x')).toEqual({ values: { status: 'failed' }, other: true });
    expect(controlsOf('{"filter":[]}')).toEqual({ values: {}, other: true });
    expect(controlsOf('')).toEqual({ values: {}, other: false });
  });

  test('CSV fields are quoted; a formula gets a leading quote, a +E.164 number and a negative number do not', () => {
    expect(csvField('say "hi", ok')).toBe('"say ""hi"", ok"');
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('+4915112345600')).toBe('"+4915112345600"');
    expect(csvField('+1+cmd')).toBe('"\'+1+cmd"');
    expect(csvField('-0.5')).toBe('"-0.5"');
    expect(csvField(null)).toBe('""');
  });
});

describe('dashboard ranges', () => {
  test('24 hourly buckets ending with the current hour; 30 UTC days ending today', () => {
    const now = Date.parse('2026-11-26T14:52:10.000Z');
    const day = buckets('24h', now);
    expect(day.starts).toHaveLength(24);
    expect(new Date(day.starts[23] ?? 0).toISOString()).toBe('2026-11-26T14:00:00.000Z');
    expect(new Date(day.starts[0] ?? 0).toISOString()).toBe('2026-11-25T15:00:00.000Z');
    const month = buckets('30d', now);
    expect(month.group).toBe('daily');
    expect(new Date(month.starts[0] ?? 0).toISOString()).toBe('2026-10-28T00:00:00.000Z');
    expect(logLink('/console', { to_eq: '+49', status_eq: 'delivered' })).toBe('/console/messages?filter=to_eq%3D%252B49%26status_eq%3Ddelivered');
  });
});

describe('CSV export bound', () => {
  const session: ConsoleSession = { operatorId: 'op1', orgId: 'org-a', email: 'ops@a.example', csrf: 'c', createdAt: '', expiresAt: '' };
  const org: Organization = { id: 'org-a', name: 'A', currency: 'EUR', smppEnabled: false, createdAt: '' };
  let matching = 0;
  const listed: unknown[] = [];
  let server: Server;
  let url: string;

  beforeAll(async () => {
    const services = {
      operators: { session: async () => session },
      accounts: { getOrg: async () => org },
    } as unknown as ConsoleServices;
    const deps = {
      log: { error: () => undefined },
      services: {
        messageHistory: { list: async (_v: unknown, q: unknown) => { listed.push(q); return []; } },
        stats: { sms: async () => [{ messages: matching }] },
      },
    };
    const app = express();
    app.use('/console', consoleRouter(deps as never, services));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}/console`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const exportOf = (filter: string): Promise<Response> => fetch(`${url}/messages.csv?${new URLSearchParams({ filter }).toString()}`, { headers: { cookie: 'console_session=x' } });

  test(`a filter matching more than ${EXPORT_LIMIT} messages is refused (400) with the count, and no row is read`, async () => {
    matching = EXPORT_LIMIT + 1;
    const res = await exportOf('status_eq=delivered');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('the filter matches 100,001 messages; an export holds at most 100,000');
    expect(listed).toEqual([]);
  });

  test('a bad filter is refused (400) with its reason', async () => {
    const res = await exportOf('status_nope=1');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('status_nope');
  });

  test(`exactly ${EXPORT_LIMIT} is exported: the header, then the rows page by page`, async () => {
    matching = EXPORT_LIMIT;
    listed.length = 0;
    const res = await exportOf('');
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('id,createdAt,from,to,status,statusCode,country,clientId,messagesCount,priceUser,currency,text\r\n');
    expect(listed).toHaveLength(1);
  });
});
