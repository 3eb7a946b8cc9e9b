// The console's opt-out search (docs/console.md, "Opt-outs"; DESIGN §4 "Two-way"): a number
// search reads the project's list once (each read of the KV list scans the bucket's keys), at
// most 5,000 entries, and pages through what matched. In-process, over a fake list.
import type { Server } from 'node:http';
import express from 'express';
import type { Organization, Project } from '../../core/accounts/types';
import type { ConsoleSession } from '../../core/console/operators';
import type { OptOutEntry } from '../../core/sms/opt-out';
import type { ConsoleServices } from '../../gateways/http/console/services';
import { consoleRouter } from '../../gateways/http/console/router';

const session: ConsoleSession = { operatorId: 'op1', orgId: 'org-a', email: 'ops@a.example', csrf: 'c', createdAt: '', expiresAt: '' };
const org: Organization = { id: 'org-a', name: 'A', currency: 'EUR', smppEnabled: false, createdAt: '' };
const project = { id: 'p1', orgId: 'org-a', name: 'P', timezone: null, createdAt: '' } as unknown as Project;
// 1,200 numbers, sorted as the list sorts them; those ending in 7 match the search below.
const entries: OptOutEntry[] = Array.from({ length: 1200 }, (_, i) => ({ number: `+49151${String(i).padStart(8, '0')}`, since: '2026-11-01T00:00:00.000Z', source: 'api' as const }));
const reads: Array<{ start: number; limit: number }> = [];
let server: Server;
let url: string;

beforeAll(async () => {
  const services = {
    operators: { session: async () => session },
    accounts: { getOrg: async () => org, listProjects: async () => [project] },
  } as unknown as ConsoleServices;
  const deps = {
    log: { error: () => undefined },
    services: {
      optOuts: {
        list: async (_project: string, page: { start: number; limit: number }) => { reads.push(page); return entries.slice(page.start, page.start + page.limit); },
      },
    },
  };
  const app = express();
  app.use('/console', consoleRouter(deps as never, services));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/console`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

test('a number search reads the list once and pages through its matches', async () => {
  const res = await fetch(`${url}/opt-outs?${new URLSearchParams({ project: 'p1', q: '7', start: '50' }).toString()}`, { headers: { cookie: 'console_session=x' } });
  expect(res.status).toBe(200);
  expect(reads).toEqual([{ start: 0, limit: 5000 }]);
  const shown = [...(await res.text()).matchAll(/data-number="([^"]+)"/g)].map((m) => m[1]);
  const matching = entries.filter((e) => e.number.slice(1).includes('7')).map((e) => e.number);
  expect(shown).toEqual(matching.slice(50, 100));
});
