// /metrics of the running stack for the gateways' own counters (docs/metrics.md): SMPP sessions
// bound and PDUs answered by command and status on the product's SMPP port, messages accepted
// over SMPP on the bus, and ingestion items by outcome. Other suites share the stack, so
// counters are checked to move by at least what this suite did.
import { randomInt } from 'node:crypto';
import { toGsm7Bytes } from '../../core/sms/encoding';
import { createLogger } from '../../infra/logger';
import { connectNats } from '../../infra/nats';
import { AccountDirectory } from '../../stores/account-directory';
import { createIngestTenant } from '../support/ingest';
import { sumOf, type Exposition } from '../support/prometheus-text';
import { scrape, scrapeUntil } from '../support/metrics-scrape';
import { issueSmpp, TestSmppClient } from '../../support/smpp-client';
import { eventually } from '../../support/eventually';
import { api, stack } from '../../support/stack';
import { createTenant } from '../../support/tenants';

const log = createLogger('warn');


/** SMPP credentials of a fresh tenant, once the product's gateway accepts them. */
async function smppCredentials(port: number): Promise<{ systemId: string; password: string }> {
  const tenant = await createTenant({ name: 'Metrics SMPP Org' });
  const nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'metrics-smpp' }, log);
  const directory = await AccountDirectory.open(nats.kv.accounts);
  try {
    const creds = await issueSmpp(stack().natsUrl, tenant.orgId, tenant.tokenId, directory);
    // Our mirror saw them; the product's may take a moment longer.
    await eventually(async () => {
      const probe = await TestSmppClient.connect(port);
      const status = (await probe.bind('transmitter', creds.systemId, creds.password)).command_status;
      await probe.close();
      return status;
    }, { what: "the product's SMPP gateway to accept the new credentials (bind status 0)", until: (status) => status === 0, timeoutMs: 5000, intervalMs: 100 });
    return creds;
  } finally {
    directory.stop();
    await nats.close();
  }
}

describe('docs/metrics.md: SMPP sessions bound and PDUs by command and status', () => {
  test('bind, 2 submits, enquire_link and a wrong password move their series; the bound gauge follows the session', async () => {
    const port = Number(stack().productEnv['SMPP_PORT']);
    const creds = await smppCredentials(port);
    const before = await scrape();
    const delta = (exp: Exposition, name: string, labels: Record<string, string>): number => sumOf(exp, name, labels) - sumOf(before, name, labels);

    const client = await TestSmppClient.connect(port);
    try {
      expect((await client.bind('transceiver', creds.systemId, creds.password)).command_status).toBe(0);
      for (let i = 0; i < 2; i += 1) {
        const resp = await client.submit({ source_addr: 'Metrics', destination_addr: `49151${String(randomInt(100_000, 999_999))}12`, short_message: toGsm7Bytes('metrics over smpp') });
        expect(resp.command_status).toBe(0);
      }
      expect((await client.enquireLink()).command_status).toBe(0);
      const wrong = await TestSmppClient.connect(port);
      expect((await wrong.bind('transmitter', creds.systemId, 'wrong')).command_status).not.toBe(0);
      await wrong.close();

      const whileBound = await scrapeUntil((exp) => {
        expect(sumOf(exp, 'smpp_sessions_bound', { mode: 'transceiver' })).toBeGreaterThanOrEqual(1);
        expect(delta(exp, 'smpp_pdus_total', { command: 'bind_transceiver', status: 'ESME_ROK' })).toBeGreaterThanOrEqual(1);
        expect(delta(exp, 'smpp_pdus_total', { command: 'submit_sm', status: 'ESME_ROK' })).toBeGreaterThanOrEqual(2);
        expect(delta(exp, 'smpp_pdus_total', { command: 'enquire_link', status: 'ESME_ROK' })).toBeGreaterThanOrEqual(1);
        expect(delta(exp, 'smpp_pdus_total', { command: 'bind_transmitter', status: 'ESME_RINVPASWD' })).toBeGreaterThanOrEqual(1);
        expect(delta(exp, 'sms_messages_accepted_total', { source: 'smpp' })).toBeGreaterThanOrEqual(2);
      });
      const bound = sumOf(whileBound, 'smpp_sessions_bound', { mode: 'transceiver' });
      expect((await client.unbind()).command_status).toBe(0);
      await scrapeUntil((exp) => {
        expect(sumOf(exp, 'smpp_sessions_bound', { mode: 'transceiver' })).toBeLessThanOrEqual(bound - 1);
        expect(delta(exp, 'smpp_pdus_total', { command: 'unbind', status: 'ESME_ROK' })).toBeGreaterThanOrEqual(1);
      });
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe('docs/metrics.md: ingestion items by outcome', () => {
  test('2 accepted contacts, 1 failed item and 1 duplicate event move ingest_items_total by endpoint and outcome', async () => {
    const t = await createIngestTenant();
    const before = await scrape();
    const delta = (exp: Exposition, labels: Record<string, string>): number => sumOf(exp, 'ingest_items_total', labels) - sumOf(before, 'ingest_items_total', labels);
    const contacts = await api(`${t.base}/contacts`, { token: t.token, body: [{ _user_id: 'm-1', plan: 'gold' }, { _user_id: 'm-2' }, { _user_id: 'm-3', _email: 'not-an-email' }] });
    expect(contacts.status).toBe(202);
    const event = { _user_id: 'm-1', _event_id: 'metrics-e-1', _event_type: 'purchase', _event_parameters: { amount: 3 } };
    expect((await api(`${t.base}/events`, { token: t.token, body: [event] })).status).toBe(202);
    await scrapeUntil((exp) => {
      expect(delta(exp, { endpoint: 'contacts', outcome: 'accepted' })).toBeGreaterThanOrEqual(2);
      expect(delta(exp, { endpoint: 'contacts', outcome: 'failed' })).toBeGreaterThanOrEqual(1);
      expect(delta(exp, { endpoint: 'events', outcome: 'accepted' })).toBeGreaterThanOrEqual(1);
    });
    expect((await api(`${t.base}/events`, { token: t.token, body: [event] })).status).toBe(202);
    const after = await scrapeUntil((exp) => {
      expect(delta(exp, { endpoint: 'events', outcome: 'duplicates' })).toBeGreaterThanOrEqual(1);
    });
    expect(sumOf(after, 'clickhouse_insert_lag_seconds_count', { writer: 'ingest' }) - sumOf(before, 'clickhouse_insert_lag_seconds_count', { writer: 'ingest' })).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
