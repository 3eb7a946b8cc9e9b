// The SMPP gateway driven by an SMPP client we did not write: Python's smpplib from PyPI
// (pinned, installed by this suite into .tools/py on first run), through
// test/support/smpplib_client.py. Binds in each mode, bad credentials, submit in each
// data_coding, long text by message_payload and by UDH, receipts with their TLVs, receipts
// buffered across a reconnect, enquire_link, query_sm, unbind, corrupt PDUs (docs/smpp.md).
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { api, stack } from '../../support/stack';
import { eventually } from '../../support/eventually';
import { createTenant, V1, type Tenant } from '../../support/tenants';
import { issueSmpp, startGatewayHarness, type GatewayHarness } from '../../support/smpp-client';

const ROOT = join(__dirname, '..', '..');
const VENV = join(ROOT, '.tools', 'py');
const PYTHON = join(VENV, 'bin', 'python');
const SMPPLIB = 'smpplib==2.2.4';
const SCRIPT = join(ROOT, 'test', 'support', 'smpplib_client.py');
const run = promisify(execFile);

/** Creates the venv and installs the pinned smpplib unless it is already there. */
function ensureSmpplib(): void {
  const installed = (): boolean => {
    if (!existsSync(PYTHON)) return false;
    try {
      return execFileSync(PYTHON, ['-c', 'import importlib.metadata as m; print(m.version("smpplib"))'], { encoding: 'utf8' }).trim() === SMPPLIB.split('==')[1];
    } catch {
      return false;
    }
  };
  if (installed()) return;
  process.stderr.write(`[smpplib] installing ${SMPPLIB} into ${VENV}\n`);
  if (!existsSync(PYTHON)) execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
  execFileSync(join(VENV, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', SMPPLIB], { stdio: 'inherit', timeout: 240_000 });
  if (!installed()) throw new Error(`${SMPPLIB} did not install into ${VENV}`);
}

type Step = Record<string, unknown> & { op: string };
type Result = Record<string, unknown> & { error?: string };

const number = (ending = '78'): string => `49151${String(randomInt(100_000, 999_999))}${ending}`;

interface Delivery { esm_class: number; data_coding: number; text: string; receipted_message_id: string | null; message_state: number | null; source_addr: string; destination_addr: string }

describe('SMPP gateway with Python smpplib (docs/smpp.md)', () => {
  let harness: GatewayHarness;
  let tenant: Tenant;
  let creds: { systemId: string; password: string };

  const scenario = async (steps: Step[]): Promise<Result[]> => {
    const { stdout } = await run(PYTHON, [SCRIPT, JSON.stringify({ host: '127.0.0.1', port: harness.port, steps })], { timeout: 60_000 });
    const results = JSON.parse(stdout) as Result[];
    const failed = results.find((r) => r.error);
    if (failed) throw new Error(`smpplib scenario failed: ${failed.error ?? ''} (results: ${JSON.stringify(results)})`);
    return results;
  };
  const bind = (mode: string, extra: Record<string, unknown> = {}): Step => ({ op: 'bind', mode, system_id: creds.systemId, password: creds.password, ...extra });
  const entity = async (id: string): Promise<Record<string, unknown>> => {
    const res = await api(`${V1}/sms/${id}`, { token: tenant.token });
    expect(res.status).toBe(200);
    return (res.body as { entity: Record<string, unknown> }).entity;
  };
  const delivered = async (id: string): Promise<void> => {
    await eventually(async () => (await entity(id))['status'], { what: `message ${id} delivered`, until: (status) => status === 'delivered', timeoutMs: 30_000, intervalMs: 200 });
  };

  beforeAll(async () => {
    ensureSmpplib();
    harness = await startGatewayHarness(stack().natsUrl);
    tenant = await createTenant({ name: 'smpplib Org' });
    creds = await issueSmpp(stack().natsUrl, tenant.orgId, tenant.tokenId, harness.directory);
  }, 300_000);

  afterAll(async () => {
    await harness?.stop();
  });

  it('binds as transmitter, receiver and transceiver (v3.4 and v5.0); bad credentials get ESME_RINVPASWD / ESME_RINVSYSID', async () => {
    const results = await scenario([
      { op: 'connect' }, bind('transmitter'), { op: 'unbind' }, { op: 'disconnect' },
      { op: 'connect' }, bind('receiver'), { op: 'unbind' }, { op: 'disconnect' },
      { op: 'connect' }, bind('transceiver', { version: 0x50 }), { op: 'unbind' }, { op: 'disconnect' },
      { op: 'connect' }, bind('transceiver', { password: 'wrongpwd' }), bind('transceiver', { system_id: 'nosuchsys' }), { op: 'disconnect' },
    ]);
    expect(results[1]).toMatchObject({ status: 0 });
    expect(results[5]).toMatchObject({ status: 0 });
    expect(results[9]).toMatchObject({ status: 0, sc_interface_version: 0x50 });
    expect(results[10]).toMatchObject({ command: 'unbind_resp', status: 0 });
    expect(results[13]).toMatchObject({ status: 0x0e });
    expect(results[14]).toMatchObject({ status: 0x0f });
  });

  it('submits in data_coding 0, 3 and 8, and long text by message_payload and by UDH; each is one message over HTTP', async () => {
    const long = 'Long text from smpplib, split by the client into UDH parts. '.repeat(5);
    const cases = [
      { coding: 0, body: 'short', text: 'GSM-7 from Python: {ok} €', encoding: 'GSM-7', count: 1 },
      { coding: 3, body: 'short', text: 'Latin-9: Œuvre à 5 €', encoding: 'GSM-7', count: 1 },
      { coding: 8, body: 'short', text: 'UCS-2: 日本語 ✓', encoding: 'UCS-2', count: 1 },
      { coding: 0, body: 'payload', text: 'Payload text '.repeat(18), encoding: 'GSM-7', count: 2 },
      { coding: 0, body: 'udh', text: long, encoding: 'GSM-7', count: 2 },
      { coding: 8, body: 'udh', text: 'Юникод по частям. '.repeat(6), encoding: 'UCS-2', count: 2 },
    ];
    const steps: Step[] = [{ op: 'connect' }, bind('transmitter'), ...cases.map((c) => ({ op: 'submit', source: 'PyClient', dest: number(), text: c.text, coding: c.coding, body: c.body })), { op: 'unbind' }];
    const results = await scenario(steps);
    for (const [i, c] of cases.entries()) {
      const r = results[i + 2] as { statuses: number[]; message_ids: string[] };
      expect(r.statuses.every((s) => s === 0)).toBe(true);
      expect(new Set(r.message_ids).size).toBe(1);
      expect(await entity(r.message_ids[0] ?? '')).toMatchObject({ text: c.text, encoding: c.encoding, messagesCount: c.count, from: 'PyClient' });
    }
  });

  it('gets each transition as a receipt deliver_sm with the standard text and the receipted_message_id / message_state TLVs', async () => {
    const results = await scenario([
      { op: 'connect' }, bind('transceiver'),
      { op: 'submit', source: 'PyClient', dest: number('78'), text: 'Receipts for Python', rd: 1 },
      { op: 'receive', count: 3, timeout: 30 },
      { op: 'unbind' },
    ]);
    const id = (results[2] as { message_ids: string[] }).message_ids[0] ?? '';
    const deliveries = (results[3] as { deliveries: Delivery[] }).deliveries;
    expect(deliveries.map((d) => [d.esm_class, d.receipted_message_id, d.message_state])).toEqual([[4, id, 1], [4, id, 1], [4, id, 2]]);
    expect(deliveries[2]?.text).toMatch(new RegExp(`^id:${id} sub:001 dlvrd:001 submit date:\\d{10} done date:\\d{10} stat:DELIVRD err:000 text:Receipts for Python$`));
    expect(deliveries[0]?.text).toContain('stat:ENROUTE');
  });

  it('keeps receipts across a reconnect: transmitter submits and unbinds, a receiver bound later gets them', async () => {
    const first = await scenario([{ op: 'connect' }, bind('transmitter'), { op: 'submit', source: 'PyClient', dest: number('78'), text: 'Buffered for later', rd: 1 }, { op: 'unbind' }, { op: 'disconnect' }]);
    const id = (first[2] as { message_ids: string[] }).message_ids[0] ?? '';
    await delivered(id);
    const second = await scenario([{ op: 'connect' }, bind('receiver'), { op: 'receive', count: 3, timeout: 20 }, { op: 'unbind' }]);
    const deliveries = (second[2] as { deliveries: Delivery[] }).deliveries;
    expect(deliveries.map((d) => [d.receipted_message_id, d.message_state])).toEqual([[id, 1], [id, 1], [id, 2]]);
  });

  it('answers enquire_link and query_sm, and unbind with unbind_resp', async () => {
    const results = await scenario([
      { op: 'connect' }, bind('transceiver'), { op: 'enquire_link' },
      { op: 'submit', source: 'PyClient', dest: number('78'), text: 'query me' },
    ]);
    const id = (results[3] as { message_ids: string[] }).message_ids[0] ?? '';
    await delivered(id);
    // smpplib only lets a receiver or transceiver send query_sm (its state table); the server takes it on transmitters too.
    const after = await scenario([{ op: 'connect' }, bind('transceiver'), { op: 'query', message_id: id }, { op: 'query', message_id: '0190f0f0-0000-7000-8000-000000000000' }, { op: 'unbind' }]);
    expect(results[2]).toEqual({ command: 'enquire_link_resp', status: 0 });
    expect(after[2]).toEqual({ status: 0, message_state: 2 });
    expect(after[3]).toMatchObject({ status: 0x67 });
    expect(after[4]).toEqual({ command: 'unbind_resp', status: 0 });
  });

  it('answers corrupt and unknown PDUs with generic_nack and keeps the session', async () => {
    const results = await scenario([
      { op: 'connect' }, bind('transceiver'),
      { op: 'raw', hex: '00000010000009990000000000000063' },
      { op: 'raw', hex: `00000017000000040000000000000064${'0005004163'}${'6d65'}` },
      { op: 'enquire_link' },
      { op: 'submit', source: 'PyClient', dest: number(), text: 'still bound' },
      { op: 'unbind' },
    ]);
    expect(results[2]).toEqual({ command: 'generic_nack', status: 0x03, sequence: 0x63 });
    expect(results[3]).toEqual({ command: 'generic_nack', status: 0x02, sequence: 0x64 });
    expect(results[4]).toEqual({ command: 'enquire_link_resp', status: 0 });
    expect((results[5] as { statuses: number[] }).statuses).toEqual([0]);
  });
});
