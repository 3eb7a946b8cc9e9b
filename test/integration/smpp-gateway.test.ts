// The SMPP gateway in-process over the test stack's NATS, with the product's lifecycle
// (worker, carrier connector, carrier simulator) behind it, driven by the `smpp` package's
// client: binds, submit in each data_coding visible over HTTP, long text, receipts as
// deliver_sm with their TLVs, receipts buffered across a reconnect, query_sm, inbound
// messages, revocation, corrupt PDUs (spec 1 §4 SMPP part, §5 items 5–6, §6 rule 4; docs/smpp.md).
import { randomInt } from 'node:crypto';
import type { PDU } from 'smpp';
import { toGsm7Bytes, toUcs2Bytes } from '../../core/sms/encoding';
import { CONSUMERS, STREAMS, SUBJECTS } from '../../core/bus/names';
import { STATUS } from '../../gateways/smpp/protocol';
import { consumerPassed, statusSequence } from '../support/bus-conditions';
import { eventually } from '../../support/eventually';
import { api, stack } from '../../support/stack';
import { createTenant, revokeToken, V1, type Tenant } from '../../support/tenants';
import { issueSmpp, startGatewayHarness, TestSmppClient, textOf, type GatewayHarness } from '../../support/smpp-client';

/** A German mobile number whose last two digits pick the simulator's path (docs/carrier.md). */
const number = (ending = '78'): string => `49151${String(randomInt(100_000, 999_999))}${ending}`;

interface SmsEntity { id: string; status: string; text: string; from: string; to: string; messagesCount: number; encoding: string; allowUnicode: boolean }

describe('SMPP gateway over the test stack (docs/smpp.md)', () => {
  let harness: GatewayHarness;
  let tenant: Tenant;
  let creds: { systemId: string; password: string };
  const clients: TestSmppClient[] = [];

  const client = async (): Promise<TestSmppClient> => {
    const c = await TestSmppClient.connect(harness.port);
    clients.push(c);
    return c;
  };
  const bound = async (mode: 'transmitter' | 'receiver' | 'transceiver', version = 0x34): Promise<TestSmppClient> => {
    const c = await client();
    expect((await c.bind(mode, creds.systemId, creds.password, version)).command_status).toBe(0);
    return c;
  };
  const entity = async (id: string): Promise<SmsEntity> => {
    const res = await api(`${V1}/sms/${id}`, { token: tenant.token });
    expect(res.status).toBe(200);
    return (res.body as { entity: SmsEntity }).entity;
  };
  const receiptsFor = (c: TestSmppClient, id: string): PDU[] => c.delivered.filter((p) => p.receipted_message_id === id);

  beforeAll(async () => {
    harness = await startGatewayHarness(stack().natsUrl);
    tenant = await createTenant({ name: 'SMPP Org' });
    creds = await issueSmpp(stack().natsUrl, tenant.orgId, tenant.tokenId, harness.directory);
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  afterAll(async () => {
    await harness?.stop();
  });

  it('§5 item 5: binds in each mode with the token credentials; wrong ones get the standard statuses', async () => {
    for (const mode of ['transmitter', 'receiver', 'transceiver'] as const) await bound(mode);
    await bound('transceiver', 0x50);
    const c = await client();
    expect((await c.bind('transceiver', 'nosuchsystem', creds.password)).command_status).toBe(STATUS.ESME_RINVSYSID);
    expect((await c.bind('transceiver', creds.systemId, 'wrongpwd')).command_status).toBe(STATUS.ESME_RINVPASWD);
  });

  it('§4: submit_sm in each data_coding is one message, visible over HTTP with the id of submit_sm_resp', async () => {
    const c = await bound('transmitter');
    const cases = [
      { data_coding: 0, short_message: toGsm7Bytes('GSM-7 text with € and [brackets]'), text: 'GSM-7 text with € and [brackets]', encoding: 'GSM-7', allowUnicode: false },
      { data_coding: 1, short_message: Buffer.from('IA5/ASCII: plain text #1', 'latin1'), text: 'IA5/ASCII: plain text #1', encoding: 'GSM-7', allowUnicode: false },
      { data_coding: 3, short_message: Buffer.from('Latin-9: caf\u00e9 \u00a4', 'latin1'), text: 'Latin-9: café €', encoding: 'GSM-7', allowUnicode: false },
      { data_coding: 8, short_message: toUcs2Bytes('UCS-2: Привет 👋'), text: 'UCS-2: Привет 👋', encoding: 'UCS-2', allowUnicode: true },
    ];
    for (const { text, encoding, allowUnicode, ...pdu } of cases) {
      const to = number();
      const resp = await c.submit({ source_addr: 'Acme', destination_addr: to, ...pdu });
      expect(resp.command_status).toBe(0);
      expect(await entity(resp.message_id ?? '')).toMatchObject({ id: resp.message_id, text, from: 'Acme', to, encoding, allowUnicode, messagesCount: 1 });
    }
  });

  it('§4: long text by message_payload and by UDH parts, each one message billed per segment', async () => {
    const c = await bound('transmitter');
    const text = 'This message is long enough to need several segments. '.repeat(6);
    const payload = await c.submit({ source_addr: 'Acme', destination_addr: number(), short_message: Buffer.alloc(0), message_payload: toGsm7Bytes(text) });
    expect(await entity(payload.message_id ?? '')).toMatchObject({ text, messagesCount: 3 });

    const bytes = toGsm7Bytes(text);
    const to = number();
    const parts = [0, 1, 2].map((i) => Buffer.concat([Buffer.from([5, 0, 3, 0x42, 3, i + 1]), bytes.subarray(i * 153, (i + 1) * 153)]));
    const resps = await Promise.all(parts.map((part) => c.submit({ source_addr: 'Acme', destination_addr: to, esm_class: 0x40, short_message: part })));
    expect(resps.map((r) => r.command_status)).toEqual([0, 0, 0]);
    expect(new Set(resps.map((r) => r.message_id)).size).toBe(1);
    expect(await entity(resps[0]?.message_id ?? '')).toMatchObject({ text, messagesCount: 3 });
  });

  it('§6 rule 4: each transition reaches a transceiver as deliver_sm with the receipt text and TLVs', async () => {
    const c = await bound('transceiver');
    const to = number('78');
    const resp = await c.submit({ source_addr: 'Acme', destination_addr: to, short_message: toGsm7Bytes('Receipt me please'), registered_delivery: 1 });
    const id = resp.message_id ?? '';
    await c.until(() => receiptsFor(c, id).some((p) => p.message_state === 2), 30_000, 'the DELIVRD receipt');
    const receipts = receiptsFor(c, id);
    expect(receipts.map((p) => p.message_state)).toEqual([1, 1, 2]);
    for (const p of receipts) {
      expect(p).toMatchObject({ esm_class: 4, source_addr: to, destination_addr: 'Acme' });
      expect(textOf(p)).toMatch(new RegExp(`^id:${id} sub:001 dlvrd:00[01] submit date:\\d{10} done date:\\d{10} stat:(ENROUTE|DELIVRD) err:000 text:Receipt me please$`));
    }
    expect(textOf(receipts[2] as PDU)).toContain('dlvrd:001');
    expect((await entity(id)).status).toBe('delivered');
    const query = await c.query(id);
    expect(query).toMatchObject({ command_status: 0, message_state: 2 });
  });

  it('§6 rule 4: a failure path ends in UNDELIV with our code; registered_delivery 0 gets nothing', async () => {
    const c = await bound('transceiver');
    const failed = await c.submit({ source_addr: 'Acme', destination_addr: number('90'), short_message: toGsm7Bytes('fails'), registered_delivery: 1 });
    const silent = await c.submit({ source_addr: 'Acme', destination_addr: number('78'), short_message: toGsm7Bytes('no receipts') });
    await c.until(() => receiptsFor(c, failed.message_id ?? '').some((p) => p.message_state === 5), 30_000, 'the UNDELIV receipt');
    expect(textOf(receiptsFor(c, failed.message_id ?? '').at(-1) as PDU)).toContain('stat:UNDELIV err:002');
    // The gateway has handled the silent message's final status (its consumer acknowledged it):
    // a receipt for it would have been sent by then.
    const seq = await statusSequence(tenant.tokenId, silent.message_id ?? '', 'delivered');
    await consumerPassed(STREAMS.sms.name, CONSUMERS.smppDlr(tenant.tokenId), seq, 'the silent message\'s delivered status');
    expect((await entity(silent.message_id ?? '')).status).toBe('delivered');
    expect(receiptsFor(c, silent.message_id ?? '')).toHaveLength(0);
  });

  it('§6 rule 4: receipts wait while no receiver is bound and arrive when one binds', async () => {
    const tx = await bound('transmitter');
    const resp = await tx.submit({ source_addr: 'Acme', destination_addr: number('78'), short_message: toGsm7Bytes('buffered receipts'), registered_delivery: 1 });
    const id = resp.message_id ?? '';
    expect((await tx.unbind()).command).toBe('unbind_resp');
    await tx.closed;
    await eventually(async () => (await entity(id)).status, { what: `message ${id} delivered`, until: (status) => status === 'delivered', timeoutMs: 30_000, intervalMs: 200 });
    expect((await entity(id)).status).toBe('delivered');

    const rx = await bound('receiver');
    await rx.until(() => receiptsFor(rx, id).length === 3, 20_000, 'three receipts');
    expect(receiptsFor(rx, id).map((p) => p.message_state)).toEqual([1, 1, 2]);
  });

  it('§6: receipts refused by the client come again', async () => {
    const c = await bound('transceiver');
    c.deliverStatus = 0x64; // ESME_RX_T_APPN: try later
    const resp = await c.submit({ source_addr: 'Acme', destination_addr: number('92'), short_message: toGsm7Bytes('rejected'), registered_delivery: 2 });
    const id = resp.message_id ?? '';
    await c.until(() => receiptsFor(c, id).length >= 1, 30_000, 'a first attempt');
    c.deliverStatus = 0;
    await c.until(() => receiptsFor(c, id).length >= 2, 20_000, 'the attempt after the refusal');
    expect(receiptsFor(c, id).map((p) => p.message_state)).toEqual([8, 8]);
  });

  it('§6: inbound messages for the token arrive as deliver_sm with esm_class 0', async () => {
    const c = await bound('receiver');
    const from = `+${number('11')}`;
    await harness.nats.js.publish(SUBJECTS.smsInbound(tenant.tokenId), JSON.stringify({ inbound: [{ id: 'mo-1', tokenId: tenant.tokenId, from, to: '4930123456', text: 'Hello back', status: 'inbound', at: new Date().toISOString() }] }));
    const mo = await c.next((p) => p.command === 'deliver_sm' && p.esm_class === 0, 10_000);
    expect(mo).toMatchObject({ source_addr: from.slice(1), destination_addr: '4930123456' });
    expect(textOf(mo)).toBe('Hello back');
  });

  it('generic_nack for a corrupt PDU; the session goes on', async () => {
    const c = await bound('transceiver');
    // submit_sm (seq 42) whose body stops inside source_addr: no NUL before command_length.
    c.raw(Buffer.from('000000170000000400000000' + '0000002a' + '0005004163' + '6d65', 'hex'));
    const nack = await c.next((p) => p.sequence_number === 42);
    expect(nack).toMatchObject({ command: 'generic_nack', command_status: STATUS.ESME_RINVCMDLEN });
    expect((await c.enquireLink()).command_status).toBe(0);
    expect((await c.submit({ source_addr: 'Acme', destination_addr: number(), short_message: toGsm7Bytes('after') })).command_status).toBe(0);
  });

  it('§5 item 5: 5 wrong passwords lock the system_id out; then the right password is refused too (ESME_RBINDFAIL), and other credentials still bind', async () => {
    const other = await createTenant({ name: 'SMPP Brute Force' });
    const otherCreds = await issueSmpp(stack().natsUrl, other.orgId, other.tokenId, harness.directory);
    const c = await client();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await c.bind('transceiver', otherCreds.systemId, `guess${i}`)).command_status);
    expect(statuses).toEqual(Array<number>(5).fill(STATUS.ESME_RINVPASWD));
    expect((await c.bind('transceiver', otherCreds.systemId, otherCreds.password)).command_status).toBe(STATUS.ESME_RBINDFAIL);
    expect(harness.gateway.sessions(otherCreds.systemId)).toBe(0);
    await bound('transmitter');
  });

  it('§5: a revoked token loses its open sessions and cannot bind again', async () => {
    const other = await createTenant({ name: 'SMPP Revoked' });
    const otherCreds = await issueSmpp(stack().natsUrl, other.orgId, other.tokenId, harness.directory);
    const c = await client();
    expect((await c.bind('transceiver', otherCreds.systemId, otherCreds.password)).command_status).toBe(0);
    await revokeToken(other.tokenId);
    await c.next((p) => p.command === 'unbind', 5000);
    await c.closed;
    const again = await client();
    expect((await again.bind('transceiver', otherCreds.systemId, otherCreds.password)).command_status).toBe(STATUS.ESME_RINVSYSID);
  });
});
