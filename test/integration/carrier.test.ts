// The carrier simulator and the carrier connector in-process against the test stack's NATS:
// every path of the simulator's number table (docs/carrier.md) ends as the exact sequence of
// carrier.events it should; concatenation, receipt redelivery, MO, no route and reconnects.
import { freePort } from '../../infra/local-engines';
import { randomBytes, randomInt } from 'node:crypto';
import { createConnection } from 'node:net';
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { connect as smppConnect, createServer as smppCreateServer, type PDU, type Session } from 'smpp';
import type { CarrierRoute } from '../../config';
import { DEFAULT_OUTCOME, SIMULATOR_OUTCOMES } from '../../core/carrier/simulator-outcomes';
import type { CarrierEvent, CarrierInbound, CarrierSubmit } from '../../core/carrier/types';
import { newId } from '../../core/ids';
import { splitSegments, toGsm7Bytes } from '../../core/sms/encoding';
import { createLogger } from '../../infra/logger';
import { CONSUMERS, STREAMS, SUBJECTS } from '../../core/bus/names';
import { decodeCarrierEvents } from '../../core/bus/decode';
import { connectNats, type Nats } from '../../infra/nats';
import { startCarrierConnector, startCarrierSimulator, type CarrierConnector, type CarrierSimulator, type MoReply } from '../../gateways/carrier';
import { eventually } from '../../support/eventually';
import { stack } from '../../support/stack';
import { consumerPassed } from '../support/bus-conditions';

const log = createLogger(process.env['TEST_LOG_LEVEL'] ?? 'warn', { suite: 'carrier' });
const RUN = randomBytes(4).toString('hex');
const ROUTE = `sim-${RUN}`;
const LATENCY_MS = 20;
const SYSTEM_ID = 'connector';
const PASSWORD = 'simulatr';
const MO_SUBJECT = `simulator.mo.${RUN}`;
// The product process of the stack runs its own connector on `carrier.submit` (durable
// `carrier-connector`); this suite's connector gets a subject and a durable of its own.
const SUBMIT_SUBJECT = `carrier.submit.test-${RUN}`;
const CONSUMER = `carrier-connector-test-${RUN}`;


/** A fresh UK mobile number whose last two digits pick the simulator's path. */
function number(ending: string): string {
  return `+447${String(randomInt(10_000_000)).padStart(7, '0')}${ending}`;
}

/** Collects every message on one subject of the CARRIER stream from now on. */
class Tap<T> {
  readonly seen: T[] = [];
  private messages: ConsumerMessages | undefined;
  /** The stream sequence of the last message seen. */
  private lastSeq = 0;

  /** `read`: what one stream message holds (carrier.events: a batch of events; others: one value). */
  constructor(private readonly nats: Nats, private readonly subject: string, private readonly read: (data: Uint8Array) => readonly T[] = (data) => [JSON.parse(Buffer.from(data).toString('utf8')) as T]) {}

  async start(): Promise<void> {
    const consumer = await this.nats.js.consumers.get(STREAMS.carrier.name, { filter_subjects: [this.subject], deliver_policy: DeliverPolicy.New });
    this.messages = await consumer.consume();
    void (async () => {
      for await (const msg of this.messages ?? []) {
        this.seen.push(...this.read(msg.data));
        this.lastSeq = msg.seq;
      }
    })();
  }

  async until(predicate: (seen: readonly T[]) => boolean, timeoutMs = 15_000): Promise<void> {
    await eventually(() => predicate(this.seen) || Promise.reject(new Error(`seen ${JSON.stringify(this.seen.slice(-5))}`)), { what: `the events on ${this.subject}`, timeoutMs, intervalMs: 25 });
  }

  /** Waits until the tap has seen every message the stream holds on its subject now. */
  async caughtUp(): Promise<void> {
    const last = (await this.nats.jsm.streams.getMessage(STREAMS.carrier.name, { last_by_subj: this.subject }))?.seq ?? 0;
    await eventually(() => this.lastSeq >= last, { what: `the tap on ${this.subject} to reach stream sequence ${last}`, intervalMs: 25 });
  }

  async stop(): Promise<void> {
    await this.messages?.close();
  }
}

type Step = readonly [kind: CarrierEvent['kind'], segment: number, state?: string, err?: number];

function steps(events: readonly CarrierEvent[]): Step[] {
  return events.map((e) => (e.kind === 'receipt' ? [e.kind, e.segment, e.state, e.err] : [e.kind, e.segment]));
}

function expectedSteps(ending: string | undefined, segment = 0): Step[] {
  const outcome = ending === undefined ? DEFAULT_OUTCOME : (SIMULATOR_OUTCOMES[ending] ?? DEFAULT_OUTCOME);
  if (outcome.submitStatus !== 0) return [['submit_failed', segment]];
  return [['submitted', segment], ...outcome.receipts.map((r): Step => ['receipt', segment, r.state, r.err])];
}

describe('docs/carrier.md: simulator and connector over the test stack', () => {
  let nats: Nats;
  let port: number;
  let simulator: CarrierSimulator;
  let connector: CarrierConnector;
  let events: Tap<CarrierEvent>;
  let inbound: Tap<CarrierInbound>;
  /** The CARRIER stream sequence of each submit this suite published. */
  const submitSeq = new Map<string, number>();
  const route = (): CarrierRoute => ({ name: ROUTE, host: '127.0.0.1', port, systemId: SYSTEM_ID, password: PASSWORD, prefixes: [''], window: 16 });
  const startSimulator = (): Promise<CarrierSimulator> =>
    startCarrierSimulator({ port, latencyMs: LATENCY_MS, systemId: SYSTEM_ID, password: PASSWORD, nats: nats.nc, moSubject: MO_SUBJECT, log });

  const submit = async (to: string, text: string, encoding: CarrierSubmit['encoding'] = 'GSM-7', subject: string = SUBMIT_SUBJECT): Promise<string> => {
    const messageId = newId();
    const body: CarrierSubmit = { messageId, orgId: `org-${RUN}`, from: 'Acme', to, country: 'GB', text, encoding, segments: splitSegments(text, encoding).length, submittedAt: new Date().toISOString() };
    const ack = await nats.js.publish(subject, JSON.stringify(body), { msgID: `submit-${messageId}` });
    submitSeq.set(messageId, ack.seq);
    return messageId;
  };
  const of = (messageId: string): CarrierEvent[] => events.seen.filter((e) => e.messageId === messageId);
  /**
   * The message's events once nothing more can come: the connector (durable `consumer`) has
   * acknowledged the submit (no segment goes again), this suite's simulator has no receipt
   * scheduled, in flight or waiting for a bind (the connector publishes a receipt before it
   * answers the deliver_sm), and the tap has seen everything on carrier.events.
   */
  const settle = async (messageId: string, count: number, consumer = CONSUMER): Promise<CarrierEvent[]> => {
    await events.until(() => of(messageId).length >= count);
    await consumerPassed(STREAMS.carrier.name, consumer, submitSeq.get(messageId) ?? Infinity, `the submit of ${messageId}`);
    await eventually(() => simulator.pendingReceipts(), { what: 'the simulator to have no receipt left to send', until: (n) => n === 0, intervalMs: 10 });
    await events.caughtUp();
    return of(messageId);
  };

  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: `carrier-test-${RUN}` }, log);
    port = await freePort();
    events = new Tap(nats, SUBJECTS.carrierEvents, decodeCarrierEvents);
    inbound = new Tap(nats, SUBJECTS.carrierInbound);
    await events.start();
    await inbound.start();
    simulator = await startSimulator();
    connector = await startCarrierConnector({ routes: [route()], nats, log, consumer: CONSUMER, subject: SUBMIT_SUBJECT });
  });

  afterAll(async () => {
    await connector?.stop();
    await nats?.jsm.consumers.delete(STREAMS.carrier.name, CONSUMER).catch(() => undefined);
    await simulator?.stop();
    await events?.stop();
    await inbound?.stop();
    await nats?.close();
  });

  test('default path: submitted, then ENROUTE and DELIVRD receipts with err 0', async () => {
    const messageId = await submit(number('00'), 'Your code is 1234');
    const seen = await settle(messageId, 3);
    expect(steps(seen)).toEqual(expectedSteps(undefined));
    const [submitted] = seen;
    expect(submitted).toMatchObject({ kind: 'submitted', carrier: ROUTE, segments: 1 });
    const carrierMessageId = submitted?.kind === 'submitted' ? submitted.carrierMessageId : '';
    expect(seen.every((e) => e.kind !== 'submit_failed' && e.carrierMessageId === carrierMessageId)).toBe(true);
    const stored = await nats.kv.carrierIds.get(`${ROUTE}.${carrierMessageId}`);
    expect(stored?.json()).toEqual({ messageId, segment: 0, segments: 1 });
  });

  test.each(Object.keys(SIMULATOR_OUTCOMES).map((ending) => [ending, SIMULATOR_OUTCOMES[ending]?.name ?? '']))(
    'a number ending in %s (%s) yields the events of its path',
    async (ending) => {
      const messageId = await submit(number(ending), `path ${ending}`);
      const expected = expectedSteps(ending);
      const seen = await settle(messageId, expected.length);
      expect(steps(seen)).toEqual(expected);
      if (ending === '95') expect(seen[0]).toMatchObject({ kind: 'submit_failed', commandStatus: 0x45, carrier: ROUTE });
    },
  );

  test('a 2-segment GSM-7 message: each segment is submitted and reported on its own', async () => {
    const text = 'Lorem ipsum dolor sit amet, {consectetur} adipiscing elit. '.repeat(3);
    expect(splitSegments(text, 'GSM-7')).toHaveLength(2);
    const messageId = await submit(number('00'), text);
    const seen = await settle(messageId, 6);
    expect(seen).toHaveLength(6);
    for (const segment of [0, 1]) expect(steps(seen.filter((e) => e.segment === segment))).toEqual(expectedSteps(undefined, segment));
    expect(seen.every((e) => e.segments === 2)).toBe(true);
    const ids = new Set(seen.map((e) => (e.kind === 'submit_failed' ? '' : e.carrierMessageId)));
    expect(ids.size).toBe(2);
  });

  test('a UCS-2 message of 2 segments follows the number table too', async () => {
    const text = 'Привет! Ваш код подтверждения: 1234. Никому его не сообщайте, пожалуйста 😀';
    expect(splitSegments(text, 'UCS-2')).toHaveLength(2);
    const messageId = await submit(number('90'), text, 'UCS-2');
    const seen = await settle(messageId, 4);
    for (const segment of [0, 1]) expect(steps(seen.filter((e) => e.segment === segment))).toEqual(expectedSteps('90', segment));
  });

  test('a receipt the SMSC sends again is published once', async () => {
    const messageId = await submit(number('00'), 'twice');
    const seen = await settle(messageId, 3);
    const first = seen[0];
    const carrierMessageId = first?.kind === 'submitted' ? first.carrierMessageId : '';
    // Both deliver_sm were answered, so whatever the connector published for them is on the stream.
    expect(await simulator.redeliver(carrierMessageId)).toBe(2);
    await events.caughtUp();
    expect(steps(of(messageId))).toEqual(expectedSteps(undefined));
  });

  test('MO on demand: simulator.mo → deliver_sm → carrier.inbound', async () => {
    const from = number('11');
    const to = number('22');
    for (const text of [`Hello ${RUN}`, `Привет ${RUN}`, `long ${RUN} `.padEnd(300, '.')]) {
      const reply = await nats.nc.request(MO_SUBJECT, JSON.stringify({ from, to, text }), { timeout: 10_000 });
      expect(reply.json<MoReply>()).toEqual({ ok: true });
      await inbound.until((seen) => seen.some((m) => m.text === text));
      const mo = inbound.seen.find((m) => m.text === text);
      expect(mo).toMatchObject({ carrier: ROUTE, from, to, text, inboundId: expect.stringMatching(new RegExp(`^${ROUTE}-[0-9a-f]{32}$`)) });
    }
  });

  test('no route: every segment is submit_failed with commandStatus null', async () => {
    const subject = `carrier.submit.noroute-${RUN}`;
    const narrow = await startCarrierConnector({
      routes: [{ ...route(), name: `narrow-${RUN}`, prefixes: ['999'] }], nats, log, consumer: `carrier-connector-noroute-${RUN}`, subject,
    });
    try {
      const messageId = await submit(number('00'), 'x'.repeat(200), 'GSM-7', subject);
      const seen = await settle(messageId, 2, `carrier-connector-noroute-${RUN}`);
      expect(seen.map((e) => e.kind === 'submit_failed' && [e.segment, e.segments, e.commandStatus, e.reason]).sort()).toEqual([
        [0, 2, null, 'no route'],
        [1, 2, null, 'no route'],
      ]);
    } finally {
      await narrow.stop();
      await nats.jsm.consumers.delete(STREAMS.carrier.name, `carrier-connector-noroute-${RUN}`);
    }
  });

  test('ESME_RTHROTTLED is retried, never failed, and the window bounds outstanding submit_sm', async () => {
    const counts = { outstanding: 0, maxOutstanding: 0, throttled: 0, accepted: 0 };
    const fake = smppCreateServer((session) => {
      session.on('error', () => undefined);
      session.on('bind_transceiver', (pdu) => session.send(pdu.response({ system_id: 'fake' })));
      session.on('enquire_link', (pdu) => session.send(pdu.response()));
      session.on('unbind', (pdu) => session.send(pdu.response(), () => session.close()));
      session.on('submit_sm', (pdu) => {
        counts.outstanding++;
        counts.maxOutstanding = Math.max(counts.maxOutstanding, counts.outstanding);
        setTimeout(() => {
          counts.outstanding--;
          if (counts.throttled < 3) {
            counts.throttled++;
            session.send(pdu.response({ command_status: 0x58 }));
          } else {
            counts.accepted++;
            session.send(pdu.response({ message_id: `fake-${RUN}-${counts.accepted}` }));
          }
        }, 30);
      });
    });
    const fakePort = await freePort();
    await new Promise<void>((resolve) => fake.listen(fakePort, '127.0.0.1', resolve));
    const subject = `carrier.submit.throttle-${RUN}`;
    const consumer = `carrier-connector-throttle-${RUN}`;
    const throttled = await startCarrierConnector({
      routes: [{ name: `fake-${RUN}`, host: '127.0.0.1', port: fakePort, systemId: 'x', password: 'y', prefixes: [''], window: 2 }], nats, log, consumer, subject,
    });
    try {
      const ids = await Promise.all([1, 2, 3].map(() => submit(number('00'), 'z'.repeat(170), 'GSM-7', subject)));
      await events.until(() => ids.every((id) => of(id).length >= 2));
      // No 7th submit_sm: the connector has acknowledged all three submits, the fake SMSC has
      // none outstanding, and the tap has seen everything on carrier.events.
      await consumerPassed(STREAMS.carrier.name, consumer, Math.max(...ids.map((id) => submitSeq.get(id) ?? Infinity)), 'the three submits');
      expect(counts.outstanding).toBe(0);
      await events.caughtUp();
      for (const id of ids) expect(steps(of(id)).sort()).toEqual([['submitted', 0], ['submitted', 1]]);
      expect(counts).toMatchObject({ throttled: 3, accepted: 6 });
      expect(counts.maxOutstanding).toBeLessThanOrEqual(2);
    } finally {
      await throttled.stop();
      await nats.jsm.consumers.delete(STREAMS.carrier.name, consumer);
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  test('a concatenated MO (UDH, parts out of order) is published once, whole, and every part is answered', async () => {
    const answered: number[] = [];
    const text = `part one ${RUN} | part two`;
    const fake = smppCreateServer((session) => {
      session.on('error', () => undefined);
      session.on('unbind', (pdu) => session.send(pdu.response(), () => session.close()));
      session.on('bind_transceiver', (pdu) => {
        session.send(pdu.response({ system_id: 'fake' }));
        const part = (seq: number, body: string): void => {
          session.deliver_sm({
            source_addr_ton: 1, source_addr_npi: 1, source_addr: '447700900111', dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '447700900222',
            esm_class: 0x40, data_coding: 0, short_message: Buffer.concat([Buffer.from([5, 0, 3, 0x42, 2, seq]), toGsm7Bytes(body)]),
          }, (resp) => answered.push(resp.command_status));
        };
        part(2, text.slice(text.indexOf(' |')));
        part(1, text.slice(0, text.indexOf(' |')));
      });
    });
    const fakePort = await freePort();
    await new Promise<void>((resolve) => fake.listen(fakePort, '127.0.0.1', resolve));
    const consumer = `carrier-connector-mo-${RUN}`;
    const moConnector = await startCarrierConnector({
      routes: [{ name: `fake-mo-${RUN}`, host: '127.0.0.1', port: fakePort, systemId: 'x', password: 'y', prefixes: [], window: 1 }], nats, log, consumer, subject: `carrier.submit.mo-${RUN}`,
    });
    try {
      await inbound.until((seen) => seen.some((m) => m.text === text));
      await eventually(() => answered.length >= 2, { what: 'both deliver_sm answered', timeoutMs: 5000, intervalMs: 20 });
      expect(answered).toEqual([0, 0]);
      expect(inbound.seen.filter((m) => m.text === text)).toHaveLength(1);
      expect(inbound.seen.find((m) => m.text === text)).toMatchObject({ carrier: `fake-mo-${RUN}`, from: '+447700900111', to: '+447700900222' });
    } finally {
      await moConnector.stop();
      await nats.jsm.consumers.delete(STREAMS.carrier.name, consumer);
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  test('the simulator answers binds: wrong password refused, v5.0 and enquire_link accepted', async () => {
    const session = await new Promise<Session>((resolve, reject) => {
      const s = smppConnect({ host: '127.0.0.1', port }, () => resolve(s));
      s.on('error', reject);
    });
    const call = (fn: (cb: (pdu: PDU) => void) => void): Promise<PDU> => new Promise((resolve) => fn(resolve));
    try {
      const refused = await call((cb) => session.bind_transceiver({ system_id: SYSTEM_ID, password: 'wrong', interface_version: 0x50 }, cb));
      expect(refused.command_status).toBe(0x0e);
    } finally {
      session.destroy();
    }
    const v5 = await new Promise<Session>((resolve, reject) => {
      const s = smppConnect({ host: '127.0.0.1', port }, () => resolve(s));
      s.on('error', reject);
    });
    try {
      const bound = await call((cb) => v5.bind_transceiver({ system_id: SYSTEM_ID, password: PASSWORD, interface_version: 0x50 }, cb));
      expect(bound.command_status).toBe(0);
      expect((await call((cb) => v5.enquire_link({}, cb))).command_status).toBe(0);
      expect((await call((cb) => v5.unbind({}, cb))).command_status).toBe(0);
    } finally {
      v5.destroy();
    }
  });

  // Issue 14 item 8, siblings on the carrier side: the simulator frames PDUs as the customer
  // server does, and the connector drops a session its SMPP reader gave up on.
  test('the simulator answers a corrupt PDU with generic_nack and closes on a command_length it cannot frame', async () => {
    const header = (length: number, commandId: number, sequence: number): Buffer => {
      const b = Buffer.alloc(16);
      b.writeUInt32BE(length, 0);
      b.writeUInt32BE(commandId, 4);
      b.writeUInt32BE(sequence, 12);
      return b;
    };
    const socket = createConnection({ host: '127.0.0.1', port });
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const nackOf = (sequence: number): Promise<number | undefined> => eventually(() => {
      const all = Buffer.concat(received);
      for (let at = 0; at + 16 <= all.length; at += all.readUInt32BE(at)) {
        if (all.readUInt32BE(at + 4) === 0x80000000 && all.readUInt32BE(at + 12) === sequence) return all.readUInt32BE(at + 8);
        if (all.readUInt32BE(at) < 16) break;
      }
      return undefined;
    }, { what: `the generic_nack of sequence ${sequence}`, until: (status) => status !== undefined, timeoutMs: 5000, intervalMs: 20 });
    socket.write(Buffer.concat([header(20, 0x00000002, 1), Buffer.from('abcd')])); // bind_transmitter without NULs
    expect(await nackOf(1)).toBe(0x02);
    socket.write(header(0x7fffffff, 0x00000004, 2));
    expect(await nackOf(2)).toBe(0x02);
    await closed;
  });

  test('the connector drops a session whose PDUs its reader cannot frame, and binds again', async () => {
    let binds = 0;
    const fake = smppCreateServer((session) => {
      session.on('error', () => undefined);
      session.on('unbind', (pdu) => session.send(pdu.response(), () => session.close()));
      session.on('bind_transceiver', (pdu) => {
        binds++;
        session.send(pdu.response({ system_id: 'fake' }));
        if (binds === 1) {
          const garbage = Buffer.alloc(16);
          garbage.writeUInt32BE(0x7fffffff, 0);
          garbage.writeUInt32BE(0x00000005, 4);
          setTimeout(() => session.socket.write(garbage), 50);
        }
      });
    });
    const fakePort = await freePort();
    await new Promise<void>((resolve) => fake.listen(fakePort, '127.0.0.1', resolve));
    const consumer = `carrier-connector-garbage-${RUN}`;
    const garbled = await startCarrierConnector({
      routes: [{ name: `fake-garbage-${RUN}`, host: '127.0.0.1', port: fakePort, systemId: 'x', password: 'y', prefixes: [], window: 1 }], nats, log, consumer, subject: `carrier.submit.garbage-${RUN}`,
    });
    try {
      await eventually(() => binds >= 2, { what: 'the connector to bind again', timeoutMs: 10_000 });
      expect(binds).toBe(2);
    } finally {
      await garbled.stop();
      await nats.jsm.consumers.delete(STREAMS.carrier.name, consumer);
      await new Promise((resolve) => fake.close(resolve));
    }
  });

  test("the product's own connector and simulator serve carrier.submit (default route `simulator`)", async () => {
    const messageId = await submit(number('92'), 'through the product', 'GSM-7', SUBJECTS.carrierSubmit);
    const seen = await settle(messageId, 2, CONSUMERS.carrierConnector);
    expect(steps(seen)).toEqual(expectedSteps('92'));
    expect(seen.every((e) => e.carrier === 'simulator')).toBe(true);
  });

  // Last: it takes the simulator away from everything else.
  test('the connector reconnects when the SMSC comes back on the same port and keeps submitting', async () => {
    await simulator.stop();
    const waiting = await submit(number('00'), 'sent while the SMSC is down');
    const seq = submitSeq.get(waiting) ?? Infinity;
    // The connector has taken the submit and holds it unacknowledged (its segment waits for the
    // bind), and nothing about it is on carrier.events.
    await eventually(async () => (await nats.jsm.consumers.info(STREAMS.carrier.name, CONSUMER)).delivered.stream_seq, {
      what: 'the connector to take the submit', until: (delivered) => delivered >= seq,
    });
    await events.caughtUp();
    expect(of(waiting)).toEqual([]);
    const held = await nats.jsm.consumers.info(STREAMS.carrier.name, CONSUMER);
    expect(held.ack_floor.stream_seq).toBeLessThan(seq);
    expect(held.num_ack_pending).toBeGreaterThanOrEqual(1);
    simulator = await startSimulator();
    expect(steps(await settle(waiting, 3))).toEqual(expectedSteps(undefined));
    const after = await submit(number('96'), 'after the reconnect');
    expect(steps(await settle(after, 3))).toEqual(expectedSteps('96'));
  }, 45_000);
});
