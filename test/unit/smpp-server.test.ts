// The SMPP server in-process over the real acceptance core with in-memory ports (no engine):
// docs/smpp.md end to end as a client sees it — binds, submit_sm rules and statuses, the
// data codings, message_payload and UDH/SAR concatenation, query_sm, limits, corrupt PDUs,
// receipts as deliver_sm, revocation and idle timeouts (spec 1 §4 SMPP part, §5, §6 rule 4, §8).
import { PDU, type PduOptions } from 'smpp';
import { hashSmppPassword } from '../../core/accounts/secrets';
import type { Organization, Price, Token } from '../../core/accounts/types';
import { SmsAcceptance } from '../../core/sms/acceptance';
import { toGsm7Bytes, toUcs2Bytes } from '../../core/sms/encoding';
import type { SmsMessage } from '../../core/sms/message';
import { createLogger } from '../../infra/logger';
import { startSmppServer, type Deliverable, type DeliveryResult, type ReceiptFeed, type SmppOptions, type SmppServer } from '../../gateways/smpp';
import { STATUS } from '../../gateways/smpp/protocol';
import { TestSmppClient, textOf } from '../../support/smpp-client';
import { eventually } from '../../support/eventually';

const log = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'silent');
const PASSWORD = 'pw123456';
const PASSWORD_HASH = hashSmppPassword(PASSWORD);
const DEST = '4915112345678';

function token(id: string, overrides: Partial<Token> = {}): Token {
  return {
    id, kind: 'api_sms', name: id, orgId: 'org-1', projectId: 'project-1', datasourceId: null, scopes: [], hash: '00', createdAt: '2026-01-01T00:00:00.000Z',
    revokedAt: null, webhook: null, smpp: { systemId: `sys-${id}`, passwordHash: PASSWORD_HASH }, numbers: [], ...overrides,
  };
}

class World {
  readonly tokens = new Map<string, Token>();
  readonly orgs = new Map<string, Organization>([
    ['org-1', { id: 'org-1', name: 'Org', currency: 'EUR', smppEnabled: true, createdAt: '2026-01-01T00:00:00.000Z' }],
    ['org-2', { id: 'org-2', name: 'Other', currency: 'EUR', smppEnabled: false, createdAt: '2026-01-01T00:00:00.000Z' }],
  ]);
  readonly messages = new Map<string, SmsMessage>();
  readonly queued: SmsMessage[] = [];
  balance = 1_000_000_000;
  acceptDelayMs = 0;
  readonly ensured = new Set<string>();
  readonly feeds = new Map<string, (item: Deliverable) => Promise<DeliveryResult>>();

  directory = {
    tokenBySystemId: (systemId: string) => [...this.tokens.values()].find((t) => t.smpp?.systemId === systemId && !t.revokedAt),
    token: (id: string) => this.tokens.get(id),
    org: (id: string) => this.orgs.get(id),
  };

  acceptance = new SmsAcceptance({
    prices: { price: (_org: string, _kind: string, country: string): Price | undefined => (country === 'DE' || country === 'GB' ? { country, currency: 'EUR', priceMicros: 10_000 } : undefined) },
    funds: {
      charge: async (_org: string, micros: number) => {
        if (this.acceptDelayMs) await new Promise((resolve) => setTimeout(resolve, this.acceptDelayMs));
        if (micros > this.balance) return false;
        this.balance -= micros;
        return true;
      },
      credit: async (_org: string, micros: number) => { this.balance += micros; },
      settle: () => undefined,
      isHeld: async () => false,
    },
    states: { putAll: async (ms: readonly SmsMessage[]) => { for (const m of ms) this.messages.set(m.id, m); }, get: async (id: string) => this.messages.get(id) ?? null },
    clientIds: { claim: async () => null, takeOver: async () => false, release: async () => undefined },
    queue: { enqueue: async (ms: readonly SmsMessage[]) => { this.queued.push(...ms); } },
    optOuts: { isOptedOut: async () => false },
  });

  receipts: ReceiptFeed = {
    ensure: async (tokenId) => { this.ensured.add(tokenId); },
    open: (tokenId, deliver) => {
      this.feeds.set(tokenId, deliver);
      return { stop: async () => { this.feeds.delete(tokenId); } };
    },
  };

  push(tokenId: string, item: Deliverable): Promise<DeliveryResult> {
    const deliver = this.feeds.get(tokenId);
    return deliver ? deliver(item) : Promise.resolve('unavailable');
  }

  start(options: Partial<SmppOptions> = {}): Promise<SmppServer> {
    return startSmppServer(0, {
      directory: this.directory,
      acceptance: this.acceptance,
      states: { get: async (id) => this.messages.get(id) ?? null },
      receipts: this.receipts,
      log,
    }, { host: '127.0.0.1', ...options });
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('SMPP server (docs/smpp.md) over in-memory ports', () => {
  let world: World;
  let server: SmppServer;
  const clients: TestSmppClient[] = [];
  const T1 = token('t1');

  const client = async (): Promise<TestSmppClient> => {
    const c = await TestSmppClient.connect(server.port);
    clients.push(c);
    return c;
  };
  const bound = async (mode: 'transmitter' | 'receiver' | 'transceiver' = 'transceiver', version = 0x34): Promise<TestSmppClient> => {
    const c = await client();
    const resp = await c.bind(mode, 'sys-t1', PASSWORD, version);
    expect(resp.command_status).toBe(0);
    return c;
  };
  const messageOf = (resp: PDU): SmsMessage => {
    const m = world.messages.get(resp.message_id ?? '');
    if (!m) throw new Error(`no message for ${resp.message_id ?? '(none)'}: status 0x${resp.command_status.toString(16)}`);
    return m;
  };

  beforeEach(async () => {
    world = new World();
    world.tokens.set('t1', T1);
    world.tokens.set('t2', token('t2', { orgId: 'org-2', smpp: { systemId: 'sys-t2', passwordHash: PASSWORD_HASH } }));
    server = await world.start({ concatTimeoutMs: 300 });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await server.stop();
  });

  describe('spec 1 §5 item 5: binds', () => {
    it.each(['transmitter', 'receiver', 'transceiver'] as const)('binds as %s with the token system_id and password', async (mode) => {
      const c = await client();
      const resp = await c.bind(mode, 'sys-t1', PASSWORD);
      expect(resp.command).toBe(`bind_${mode}_resp`);
      expect(resp.command_status).toBe(0);
      expect(resp.system_id).toBe('SMSPLATFORM');
      expect(world.ensured.has('t1')).toBe(true);
      expect(world.feeds.has('t1')).toBe(mode !== 'transmitter');
    });

    it('answers v5.0 binds with sc_interface_version 0x50 and v3.4 binds with 0x34', async () => {
      const v5 = await client();
      expect((await v5.bind('transceiver', 'sys-t1', PASSWORD, 0x50)).sc_interface_version).toBe(0x50);
      const v34 = await client();
      expect((await v34.bind('transceiver', 'sys-t1', PASSWORD, 0x34)).sc_interface_version).toBe(0x34);
    });

    it('refuses an unknown system_id (ESME_RINVSYSID) and a wrong password (ESME_RINVPASWD)', async () => {
      const c = await client();
      expect((await c.bind('transceiver', 'nobody', PASSWORD)).command_status).toBe(STATUS.ESME_RINVSYSID);
      expect((await c.bind('transceiver', 'sys-t1', 'wrong')).command_status).toBe(STATUS.ESME_RINVPASWD);
      // The same connection may still bind correctly afterwards.
      expect((await c.bind('transceiver', 'sys-t1', PASSWORD)).command_status).toBe(0);
      expect((await c.bind('transceiver', 'sys-t1', PASSWORD)).command_status).toBe(STATUS.ESME_RALYBND);
    });

    it('refuses a revoked token (ESME_RINVSYSID) and an organization without SMPP (ESME_RBINDFAIL)', async () => {
      const c = await client();
      expect((await c.bind('transceiver', 'sys-t2', PASSWORD)).command_status).toBe(STATUS.ESME_RBINDFAIL);
      world.tokens.set('t1', { ...T1, revokedAt: '2026-01-02T00:00:00.000Z' });
      expect((await c.bind('transceiver', 'sys-t1', PASSWORD)).command_status).toBe(STATUS.ESME_RINVSYSID);
    });

    it('refuses binds beyond the maximum sessions per system_id with ESME_RBINDFAIL', async () => {
      await server.stop();
      server = await world.start({ maxSessionsPerSystemId: 2 });
      const results = await Promise.all([0, 1, 2].map(async () => (await (await client()).bind('transmitter', 'sys-t1', PASSWORD)).command_status));
      expect(results.sort()).toEqual([0, 0, STATUS.ESME_RBINDFAIL].sort());
      expect(server.sessions('sys-t1')).toBe(2);
    });

    it('closes the sessions of a token once it is revoked, and of a re-issued password', async () => {
      await server.stop();
      server = await world.start({ watchIntervalMs: 50 });
      const a = await bound();
      world.tokens.set('t1', { ...T1, revokedAt: '2026-01-02T00:00:00.000Z' });
      await a.next((p) => p.command === 'unbind', 3000);
      await a.closed;
      world.tokens.set('t1', T1);
      const b = await bound();
      world.tokens.set('t1', { ...T1, smpp: { systemId: 'sys-t1', passwordHash: hashSmppPassword('another1') } });
      await b.closed;
      world.tokens.set('t1', T1);
      const c = await bound();
      world.orgs.set('org-1', { ...(world.orgs.get('org-1') as Organization), smppEnabled: false });
      await c.closed;
    });

    it('refuses submit_sm before a bind and on a receiver session (ESME_RINVBNDSTS)', async () => {
      const c = await client();
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: 'hi' })).command_status).toBe(STATUS.ESME_RINVBNDSTS);
      await c.bind('receiver', 'sys-t1', PASSWORD);
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: 'hi' })).command_status).toBe(STATUS.ESME_RINVBNDSTS);
    });
  });

  describe('spec 1 §4 submit_sm', () => {
    it('accepts data_coding 0 (GSM-7 unpacked, extension characters included) with our message id', async () => {
      const c = await bound('transmitter');
      const resp = await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 0, short_message: toGsm7Bytes('Price: 5€ [ok] {x}'), registered_delivery: 1 });
      expect(resp.command_status).toBe(0);
      const m = messageOf(resp);
      expect(m).toMatchObject({ text: 'Price: 5€ [ok] {x}', from: 'Acme', to: DEST, source: 'smpp', encoding: 'GSM-7', allowUnicode: false, tokenId: 't1', projectId: 'project-1' });
      expect(world.messages.get(m.id)?.receiptRequest).toEqual({ registeredDelivery: 1 });
      expect(world.queued.map((q) => q.id)).toContain(m.id);
    });

    it('issue 10: the receipt request (registered_delivery, user_message_reference) travels inside the accepted message', async () => {
      const c = await bound('transmitter');
      const m = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('hi'), registered_delivery: 2, user_message_reference: 4242 } as PduOptions));
      expect(world.messages.get(m.id)?.receiptRequest).toEqual({ registeredDelivery: 2, userMessageReference: 4242 });
      expect(world.queued.find((q) => q.id === m.id)?.receiptRequest).toEqual({ registeredDelivery: 2, userMessageReference: 4242 });
    });

    it('accepts data_coding 3 (ISO-8859-15): € and Š decoded, then transliterated to GSM-7 as over HTTP', async () => {
      const c = await bound('transmitter');
      const latin9 = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0xa4, 0x20, 0xa6]); // "Café € Š"
      const m = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: `+${DEST}`, data_coding: 3, short_message: latin9 }));
      expect(m.text).toBe('Café € Š');
      expect(m).toMatchObject({ encoding: 'GSM-7', allowUnicode: false, deliveredText: 'Café € S', to: `+${DEST}` });
      expect(world.messages.get(m.id)?.receiptRequest).toBeUndefined();
    });

    it('accepts data_coding 1 (IA5/ASCII, the default of common client libraries) as plain text, in short_message and message_payload', async () => {
      const c = await bound('transmitter');
      const m = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 1, short_message: Buffer.from('Your code is 1234 (ASCII)', 'latin1') }));
      expect(m).toMatchObject({ text: 'Your code is 1234 (ASCII)', encoding: 'GSM-7', allowUnicode: false, messagesCount: 1 });
      const long = 'ASCII in message_payload. '.repeat(10);
      const p = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 1, short_message: Buffer.alloc(0), message_payload: Buffer.from(long, 'latin1') }));
      expect(p).toMatchObject({ text: long, encoding: 'GSM-7', messagesCount: 2 });
    });

    it('refuses data_coding 1 with an octet above 0x7F (not ASCII) with ESME_RINVDCS, in short_message and message_payload, and queues nothing', async () => {
      const c = await bound('transmitter');
      const latin1 = Buffer.from('caf\u00e9', 'latin1');
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 1, short_message: latin1 })).command_status).toBe(STATUS.ESME_RINVDCS);
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 1, short_message: Buffer.alloc(0), message_payload: latin1 })).command_status).toBe(STATUS.ESME_RINVDCS);
      expect(world.queued).toHaveLength(0);
    });

    it('accepts data_coding 8 (UCS-2) as a Unicode message (allowUnicode)', async () => {
      const c = await bound('transmitter');
      const m = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 8, short_message: toUcs2Bytes('Привет 👋') }));
      expect(m).toMatchObject({ text: 'Привет 👋', encoding: 'UCS-2', unicode: true, allowUnicode: true });
    });

    it.each([
      ['data_coding 4', { data_coding: 4 }, STATUS.ESME_RINVDCS],
      ['a 2-character source_addr', { source_addr: 'Ac' }, STATUS.ESME_RINVSRCADR],
      ['a 12-character source_addr', { source_addr: 'Acme Company' }, STATUS.ESME_RINVSRCADR],
      ['a destination that is not E.164', { destination_addr: 'abc' }, STATUS.ESME_RINVDSTADR],
      ['a destination no country has', { destination_addr: '99912345678' }, STATUS.ESME_RINVDSTADR],
      ['a country without a price', { destination_addr: '12025550123' }, STATUS.ESME_RINVDSTADR],
      ['esm_class 0x08', { esm_class: 0x08 }, STATUS.ESME_RINVESMCLASS],
      ['esm_class 0x80 (reply path)', { esm_class: 0x80 }, STATUS.ESME_RINVESMCLASS],
      ['an empty message', { short_message: Buffer.alloc(0) }, STATUS.ESME_RINVMSGLEN],
      ['a UCS-2 body of odd length', { data_coding: 8, short_message: Buffer.from([0x00, 0x41, 0x00]) }, STATUS.ESME_RINVMSGLEN],
      ['a text over 10 segments', { message_payload: toGsm7Bytes('x'.repeat(1531)), short_message: Buffer.alloc(0) }, STATUS.ESME_RINVMSGLEN],
      ['short_message and message_payload both set', { message_payload: toGsm7Bytes('more') }, STATUS.ESME_RINVMSGLEN],
      ['a scheduled delivery in the past', { schedule_delivery_time: '200101000000000+' }, STATUS.ESME_RINVSCHED],
      ['a scheduled delivery beyond 35 days', { schedule_delivery_time: '000200000000000R' }, STATUS.ESME_RINVSCHED],
      ['a schedule_delivery_time not in the SMPP time format', { schedule_delivery_time: 'tomorrow' }, STATUS.ESME_RINVSCHED],
    ] as Array<[string, PduOptions, number]>)('refuses %s', async (_name, options, status) => {
      const c = await bound('transmitter');
      const resp = await c.submit({ source_addr: 'Acme', destination_addr: DEST, data_coding: 0, short_message: toGsm7Bytes('hello'), ...options });
      expect(resp.command_status).toBe(status);
      expect(world.queued).toHaveLength(0);
    });

    it('accepts esm_class messaging modes 1-3 (store and forward) as plain messages', async () => {
      const c = await bound('transmitter');
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 3, short_message: toGsm7Bytes('hello') })).command_status).toBe(0);
    });

    it('answers ESME_RX_P_APPN (0x65) when the balance does not cover the message, and charges nothing', async () => {
      world.balance = 5_000;
      const c = await bound('transmitter');
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('hello') })).command_status).toBe(STATUS.ESME_RX_P_APPN);
      expect(world.balance).toBe(5_000);
    });

    it('judges each of a burst on its own when the balance covers only some (batched acceptance)', async () => {
      world.balance = 35_000;
      const c = await bound('transmitter');
      const statuses = await Promise.all(Array.from({ length: 5 }, () => c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('hi') }).then((r) => r.command_status)));
      expect(statuses.filter((s) => s === 0)).toHaveLength(3);
      expect(statuses.filter((s) => s === STATUS.ESME_RX_P_APPN)).toHaveLength(2);
    });

    it('takes long text in message_payload and bills it per segment', async () => {
      const c = await bound('transmitter');
      const text = 'Long message. '.repeat(30);
      const m = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: Buffer.alloc(0), message_payload: toGsm7Bytes(text) }));
      expect(m.text).toBe(text);
      expect(m.messagesCount).toBe(3);
      expect(m.priceUserMicros).toBe(30_000);
    });

    it('tolerates unknown optional TLVs', async () => {
      const c = await bound('transmitter');
      const pdu = new PDU('submit_sm', { sequence_number: 77, source_addr: 'Acme', destination_addr: DEST, data_coding: 0, short_message: toGsm7Bytes('tlv') }).toBuffer();
      const extra = Buffer.from([0x14, 0x01, 0x00, 0x03, 0x61, 0x62, 0x63]);
      const withTlv = Buffer.concat([pdu, extra]);
      withTlv.writeUInt32BE(withTlv.length, 0);
      c.raw(withTlv);
      const resp = await c.next((p) => p.command === 'submit_sm_resp' && p.sequence_number === 77);
      expect(resp.command_status).toBe(0);
    });
  });

  describe('spec 1 §4 concatenation', () => {
    const udhPart = (ref: number, total: number, seq: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([0x05, 0x00, 0x03, ref, total, seq]), body]);

    it('reassembles UDH parts (out of order) into one message; every part is answered with its id once complete', async () => {
      const c = await bound('transmitter');
      const text = `${'A'.repeat(152)}€${'B'.repeat(100)}`; // the € escape straddles parts 1 and 2
      const bytes = toGsm7Bytes(text);
      const parts = [bytes.subarray(0, 153), bytes.subarray(153)];
      const second = c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, short_message: udhPart(7, 2, 2, parts[1] as Buffer), registered_delivery: 1 });
      // Part 2 alone is held (its submit_sm_resp withheld) and queues nothing.
      await eventually(() => server.heldParts(), { what: 'part 2 to be held', until: (n) => n === 1, intervalMs: 5 });
      expect(world.queued).toHaveLength(0);
      const first = c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, short_message: udhPart(7, 2, 1, parts[0] as Buffer), registered_delivery: 1 });
      const [r2, r1] = await Promise.all([second, first]);
      expect(r1.command_status).toBe(0);
      expect(r1.message_id).toBe(r2.message_id);
      const m = messageOf(r1);
      expect(m.text).toBe(text);
      expect(m.messagesCount).toBe(2);
      expect(world.queued).toHaveLength(1);
    });

    it('reassembles UCS-2 parts with a surrogate pair split between them', async () => {
      const c = await bound('transmitter');
      const bytes = toUcs2Bytes(`${'я'.repeat(66)}😀${'ю'.repeat(10)}`);
      const cut = 134; // inside the surrogate pair
      const rs = await Promise.all([
        c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, data_coding: 8, short_message: udhPart(9, 2, 1, bytes.subarray(0, cut)) }),
        c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, data_coding: 8, short_message: udhPart(9, 2, 2, bytes.subarray(cut)) }),
      ]);
      expect(messageOf(rs[0] as PDU).text).toBe(`${'я'.repeat(66)}😀${'ю'.repeat(10)}`);
    });

    it('reassembles parts sent with the SAR TLVs', async () => {
      const c = await bound('transmitter');
      const sar = (seq: number, text: string): PduOptions => ({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes(text), sar_msg_ref_num: 300, sar_total_segments: 2, sar_segment_seqnum: seq } as PduOptions);
      const rs = await Promise.all([c.submit(sar(1, 'Hello, ')), c.submit(sar(2, 'world'))]);
      expect(messageOf(rs[1] as PDU).text).toBe('Hello, world');
    });

    it('refuses the held parts with ESME_RSUBMITFAIL when the rest does not arrive in time, and accepts nothing', async () => {
      const c = await bound('transmitter');
      const rs = await Promise.all([1, 2].map((seq) => c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, short_message: udhPart(11, 3, seq, toGsm7Bytes('part')) })));
      expect(rs.map((r) => r.command_status)).toEqual([STATUS.ESME_RSUBMITFAIL, STATUS.ESME_RSUBMITFAIL]);
      expect(world.queued).toHaveLength(0);
    });

    // Issue 14 item 8: docs/smpp.md promises ESME_RINVMSGLEN for a broken UDH; nothing is charged.
    it.each([
      ['sequence beyond the total', [0x05, 0x00, 0x03, 0x21, 0x02, 0x03]],
      ['sequence 0', [0x05, 0x00, 0x03, 0x21, 0x02, 0x00]],
      ['total 0', [0x05, 0x00, 0x03, 0x21, 0x00, 0x00]],
      ['total 0, sequence 1', [0x05, 0x00, 0x03, 0x21, 0x00, 0x01]],
      ['16-bit reference, sequence beyond the total', [0x06, 0x08, 0x04, 0x12, 0x34, 0x02, 0x05]],
      ['an element running past the header', [0x05, 0x00, 0x07, 0x21, 0x02, 0x01]],
    ])('refuses a concatenation UDH with %s with ESME_RINVMSGLEN and charges nothing', async (_name, udh) => {
      const c = await bound('transmitter');
      const before = world.balance;
      const resp = await c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, short_message: Buffer.concat([Buffer.from(udh), toGsm7Bytes('impossible')]) });
      expect(resp.command_status).toBe(STATUS.ESME_RINVMSGLEN);
      expect(world.queued).toHaveLength(0);
      expect(world.balance).toBe(before);
    });

    it('refuses SAR TLVs with impossible values with ESME_RINVMSGLEN and charges nothing', async () => {
      const c = await bound('transmitter');
      const before = world.balance;
      const sar = (total: number, seq: number): PduOptions => ({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('sar'), sar_msg_ref_num: 301, sar_total_segments: total, sar_segment_seqnum: seq } as PduOptions);
      const rs = await Promise.all([c.submit(sar(2, 3)), c.submit(sar(2, 0)), c.submit(sar(0, 0))]);
      expect(rs.map((r) => r.command_status)).toEqual([STATUS.ESME_RINVMSGLEN, STATUS.ESME_RINVMSGLEN, STATUS.ESME_RINVMSGLEN]);
      expect(world.queued).toHaveLength(0);
      expect(world.balance).toBe(before);
    });

    it('keeps parts of the same reference to different recipients apart', async () => {
      const c = await bound('transmitter');
      const rs = await Promise.all([
        c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, short_message: udhPart(5, 2, 1, toGsm7Bytes('to A 1 ')) }),
        c.submit({ source_addr: 'Acme', destination_addr: '4915112345679', esm_class: 0x40, short_message: udhPart(5, 2, 1, toGsm7Bytes('to B 1 ')) }),
        c.submit({ source_addr: 'Acme', destination_addr: '4915112345679', esm_class: 0x40, short_message: udhPart(5, 2, 2, toGsm7Bytes('to B 2')) }),
        c.submit({ source_addr: 'Acme', destination_addr: DEST, esm_class: 0x40, short_message: udhPart(5, 2, 2, toGsm7Bytes('to A 2')) }),
      ]);
      expect(new Set(rs.map((r) => r.message_id)).size).toBe(2);
      expect(messageOf(rs[0] as PDU).text).toBe('to A 1 to A 2');
      expect(messageOf(rs[1] as PDU).text).toBe('to B 1 to B 2');
    });
  });

  describe('spec 1 §8 limits', () => {
    it('answers ESME_RTHROTTLED beyond the per-session submits per second', async () => {
      await server.stop();
      server = await world.start({ maxSubmitsPerSecond: 5 });
      const c = await bound('transmitter');
      const statuses = await Promise.all(Array.from({ length: 12 }, () => c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('x') }).then((r) => r.command_status)));
      expect(statuses.filter((s) => s === STATUS.ESME_RTHROTTLED).length).toBeGreaterThanOrEqual(6);
      expect(statuses.filter((s) => s === 0).length).toBeGreaterThanOrEqual(5);
    });

    it('answers ESME_RTHROTTLED to a submit_sm beyond the window of outstanding PDUs', async () => {
      await server.stop();
      server = await world.start({ window: 2 });
      world.acceptDelayMs = 200;
      const c = await bound('transmitter');
      const statuses = await Promise.all(Array.from({ length: 4 }, () => c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('x') }).then((r) => r.command_status)));
      expect(statuses.filter((s) => s === 0)).toHaveLength(2);
      expect(statuses.filter((s) => s === STATUS.ESME_RTHROTTLED)).toHaveLength(2);
    });

    it('unbinds and closes an idle session; a session that never binds is closed too', async () => {
      await server.stop();
      server = await world.start({ idleTimeoutMs: 300, bindTimeoutMs: 300, watchIntervalMs: 50 });
      const c = await bound();
      await c.next((p) => p.command === 'unbind', 3000);
      await c.closed;
      const silent = await client();
      await silent.closed;
    });

    it('enquire_link keeps a session alive past the idle timeout', async () => {
      await server.stop();
      server = await world.start({ idleTimeoutMs: 400, watchIntervalMs: 50 });
      const c = await bound();
      for (let i = 0; i < 5; i++) {
        expect((await c.enquireLink()).command).toBe('enquire_link_resp');
        await sleep(150);
      }
      expect(c.isClosed).toBe(false);
    });
  });

  describe('query_sm, enquire_link, unbind', () => {
    it('query_sm answers the current state; unknown or foreign ids get ESME_RQUERYFAIL', async () => {
      const c = await bound('transmitter');
      const m = messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('q') }));
      const queued = await c.query(m.id);
      expect(queued).toMatchObject({ command_status: 0, message_id: m.id, message_state: 1 });
      world.messages.set(m.id, { ...m, status: 'delivered', statusCode: 0, deliveredAt: '2026-03-04T05:06:07.000Z', updatedAt: '2026-03-04T05:06:07.000Z' });
      const delivered = await c.query(m.id);
      expect(delivered.message_state).toBe(2);
      expect((delivered.final_date as Date).toISOString()).toBe('2026-03-04T05:06:07.000Z');
      expect((await c.query('0190f0f0-0000-7000-8000-000000000000')).command_status).toBe(STATUS.ESME_RQUERYFAIL);
      world.messages.set('foreign', { ...m, id: 'foreign', projectId: 'project-9' });
      expect((await c.query('foreign')).command_status).toBe(STATUS.ESME_RQUERYFAIL);
    });

    it('answers enquire_link before and after a bind, and unbind with unbind_resp then closes', async () => {
      const c = await client();
      expect((await c.enquireLink()).command_status).toBe(0);
      await c.bind('transceiver', 'sys-t1', PASSWORD);
      expect((await c.enquireLink()).command).toBe('enquire_link_resp');
      const resp = await c.unbind();
      expect(resp.command).toBe('unbind_resp');
      await c.closed;
      expect(server.sessions('sys-t1')).toBe(0);
    });

    it('answers the submits in flight before unbind_resp', async () => {
      world.acceptDelayMs = 150;
      const c = await bound('transmitter');
      const submitted = c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('late') });
      const unbound = c.unbind();
      expect((await submitted).command_status).toBe(0);
      expect((await unbound).command).toBe('unbind_resp');
      const order = c.received.map((p) => p.command);
      expect(order.indexOf('submit_sm_resp')).toBeLessThan(order.indexOf('unbind_resp'));
    });
  });

  describe('generic_nack: unknown and corrupt PDUs never end the session', () => {
    const header = (length: number, commandId: number, sequence: number): Buffer => {
      const b = Buffer.alloc(16);
      b.writeUInt32BE(length, 0);
      b.writeUInt32BE(commandId, 4);
      b.writeUInt32BE(0, 8);
      b.writeUInt32BE(sequence, 12);
      return b;
    };
    const alive = async (c: TestSmppClient): Promise<void> => {
      expect((await c.enquireLink()).command_status).toBe(0);
      expect((await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('still here') })).command_status).toBe(0);
    };

    it('unknown command id → generic_nack ESME_RINVCMDID', async () => {
      const c = await bound();
      c.raw(header(16, 0x00000999, 41));
      const nack = await c.next((p) => p.command === 'generic_nack' && p.sequence_number === 41);
      expect(nack.command_status).toBe(STATUS.ESME_RINVCMDID);
      await alive(c);
    });

    it('a submit_sm whose body is cut short → generic_nack ESME_RINVCMDLEN', async () => {
      const c = await bound();
      const body = Buffer.from('\u0000\u0005\u0000Acme', 'latin1'); // stops inside source_addr
      c.raw(Buffer.concat([header(16 + body.length, 0x00000004, 42), body]));
      const nack = await c.next((p) => p.command === 'generic_nack' && p.sequence_number === 42);
      expect(nack.command_status).toBe(STATUS.ESME_RINVCMDLEN);
      await alive(c);
    });

    it('a TLV whose length runs past the PDU → generic_nack', async () => {
      const c = await bound();
      const pdu = new PDU('submit_sm', { sequence_number: 43, source_addr: 'Acme', destination_addr: DEST, data_coding: 0, short_message: toGsm7Bytes('x') }).toBuffer();
      const broken = Buffer.concat([pdu, Buffer.from([0x04, 0x24, 0x00, 0x50, 0x41])]);
      broken.writeUInt32BE(broken.length, 0);
      c.raw(broken);
      expect((await c.next((p) => p.sequence_number === 43)).command).toBe('generic_nack');
      await alive(c);
    });

    // Issue 14 item 8: a length over the maximum cannot be framed either; it closes like one below 16.
    it('a PDU longer than the maximum loses the framing: generic_nack ESME_RINVCMDLEN, then the connection closes', async () => {
      const c = await bound();
      const length = 20_000;
      c.raw(Buffer.concat([header(length, 0x00000004, 44), Buffer.alloc(length - 16, 0x41)]));
      expect((await c.next((p) => p.sequence_number === 44)).command_status).toBe(STATUS.ESME_RINVCMDLEN);
      await c.closed;
      expect(server.sessions('sys-t1')).toBe(0);
    });

    it('a PDU sent in pieces is read whole', async () => {
      const c = await bound();
      const pdu = new PDU('submit_sm', { sequence_number: 45, source_addr: 'Acme', destination_addr: DEST, data_coding: 0, short_message: toGsm7Bytes('pieces') }).toBuffer();
      for (const piece of [pdu.subarray(0, 3), pdu.subarray(3, 20), pdu.subarray(20)]) {
        c.raw(piece);
        await sleep(20);
      }
      expect((await c.next((p) => p.sequence_number === 45)).command_status).toBe(0);
    });

    it('a known command this server does not offer → its response with ESME_RINVCMDID', async () => {
      const c = await bound();
      c.raw(header(16, 0x00000008, 46)); // cancel_sm
      const resp = await c.next((p) => p.sequence_number === 46);
      expect(resp.command).toBe('cancel_sm_resp');
      expect(resp.command_status).toBe(STATUS.ESME_RINVCMDID);
      await alive(c);
    });

    it('a command_length below 16 loses the framing: generic_nack, then the connection closes', async () => {
      const c = await bound();
      c.raw(header(8, 0x00000015, 47));
      expect((await c.next((p) => p.sequence_number === 47)).command).toBe('generic_nack');
      await c.closed;
    });

    // Issue 14 item 8: every command_length that cannot be framed ends the session the same way.
    it.each([
      ['0x7fffffff', 0x7fffffff],
      ['0xdeadbeef', 0xdeadbeef],
      ['0', 0],
      ['15', 15],
      ['maximum + 1', 16_385],
    ])('a command_length of %s: generic_nack ESME_RINVCMDLEN, then the connection closes', async (_name, length) => {
      const c = await bound();
      c.raw(header(length, 0x00000004, 48));
      const nack = await c.next((p) => p.sequence_number === 48);
      expect([nack.command, nack.command_status]).toEqual(['generic_nack', STATUS.ESME_RINVCMDLEN]);
      await c.closed;
      expect(server.sessions('sys-t1')).toBe(0);
    });

    it('a session whose framing is lost gets no more deliver_sm: receipts go to the other receivers', async () => {
      const broken = await bound('transceiver');
      const healthy = await bound('receiver');
      broken.answerDeliveries = false;
      broken.raw(header(0x7fffffff, 0x00000004, 49));
      await broken.next((p) => p.sequence_number === 49);
      const results = await Promise.all([1, 2, 3, 4].map((i) => world.push('t1', {
        kind: 'inbound', from: '+4915112345678', to: 'Acme', text: `after ${i}`,
      })));
      expect(results).toEqual(['ok', 'ok', 'ok', 'ok']);
      expect(healthy.delivered).toHaveLength(4);
      expect(broken.delivered).toHaveLength(0);
    });
  });

  describe('spec 1 §6 rule 4: receipts as deliver_sm', () => {
    const submitted = async (c: TestSmppClient, extra: PduOptions = {}): Promise<SmsMessage> =>
      messageOf(await c.submit({ source_addr: 'Acme', destination_addr: DEST, short_message: toGsm7Bytes('Your code is 1234, valid 5 minutes'), registered_delivery: 1, ...extra }));
    const receiptFor = (m: SmsMessage, status: SmsMessage['status'], code = 0): Deliverable => ({
      kind: 'receipt', message: m, transition: { status, code, eventAt: '2026-05-06T07:08:09.000Z' }, userMessageReference: world.messages.get(m.id)?.receiptRequest?.userMessageReference,
    });

    it('sends a receipt with esm_class 0x04, the standard text and the receipted_message_id / message_state TLVs', async () => {
      const c = await bound('transceiver');
      const m = await submitted(c, { user_message_reference: 4242 } as PduOptions);
      expect(await world.push('t1', receiptFor(m, 'delivered'))).toBe('ok');
      const dlr = c.delivered[0] as PDU;
      expect(dlr.esm_class).toBe(0x04);
      expect(dlr.source_addr).toBe(DEST);
      expect(dlr.destination_addr).toBe('Acme');
      expect(dlr.receipted_message_id).toBe(m.id);
      expect(dlr.message_state).toBe(2);
      expect(dlr.user_message_reference).toBe(4242);
      const created = new Date(m.createdAt);
      const yymmddhhmm = (d: Date): string => d.toISOString().replace(/\D/g, '').slice(2, 12);
      expect(textOf(dlr)).toBe(`id:${m.id} sub:001 dlvrd:001 submit date:${yymmddhhmm(created)} done date:2605060708 stat:DELIVRD err:000 text:Your code is 1234, v`);
    });

    it.each([
      ['sent', 'ENROUTE', 1], ['buffered', 'ENROUTE', 1], ['accepted', 'ACCEPTD', 6], ['expired', 'EXPIRED', 3], ['canceled', 'DELETED', 4],
      ['failed', 'UNDELIV', 5], ['error', 'UNDELIV', 5], ['rejected', 'REJECTD', 8], ['unknown', 'UNKNOWN', 7],
    ] as const)('maps %s to stat:%s (message_state %i)', async (status, stat, state) => {
      const c = await bound('receiver');
      const sender = await bound('transmitter');
      const m = await submitted(sender);
      expect(await world.push('t1', receiptFor(m, status, 8))).toBe('ok');
      const dlr = c.delivered[0] as PDU;
      expect(textOf(dlr)).toContain(`stat:${stat} err:008`);
      expect(dlr.message_state).toBe(state);
      expect(sender.delivered).toHaveLength(0);
    });

    it('sends no TLVs to a v3.3 session', async () => {
      const c = await bound('receiver', 0x33);
      const m = await submitted(await bound('transmitter'));
      expect(await world.push('t1', receiptFor(m, 'delivered'))).toBe('ok');
      expect((c.delivered[0] as PDU).receipted_message_id).toBeUndefined();
    });

    it('spreads receipts over the receiver sessions; a refusal or no session is reported to the feed', async () => {
      const a = await bound('receiver');
      const b = await bound('receiver');
      const m = await submitted(await bound('transmitter'));
      for (let i = 0; i < 4; i++) expect(await world.push('t1', receiptFor(m, 'sent'))).toBe('ok');
      expect([a.delivered.length, b.delivered.length]).toEqual([2, 2]);
      a.deliverStatus = 0x64;
      b.deliverStatus = 0x64;
      expect(await world.push('t1', receiptFor(m, 'sent'))).toBe('refused');
      await a.unbind();
      await b.unbind();
      expect(await world.push('t1', receiptFor(m, 'sent'))).toBe('unavailable');
      expect(world.feeds.has('t1')).toBe(false);
    });

    it('a deliver_sm left unanswered is reported unavailable after the deliver timeout', async () => {
      await server.stop();
      server = await world.start({ deliverTimeoutMs: 200 });
      const c = await bound('receiver');
      c.answerDeliveries = false;
      const m = await submitted(await bound('transmitter'));
      expect(await world.push('t1', receiptFor(m, 'delivered'))).toBe('unavailable');
    });

    it('delivers inbound messages as deliver_sm (esm_class 0)', async () => {
      const c = await bound('receiver');
      expect(await world.push('t1', { kind: 'inbound', from: `+${DEST}`, to: '447700900999', text: 'STOP' })).toBe('ok');
      const mo = c.delivered[0] as PDU;
      expect(mo).toMatchObject({ esm_class: 0, source_addr: DEST, destination_addr: '447700900999' });
      expect(textOf(mo)).toBe('STOP');
    });
  });
});
