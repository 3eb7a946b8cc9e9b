// Accepted messages stored without being decoded (pipelines/history-writer.ts, migration 0011):
// the history writer hands ClickHouse the JSON of each sms.accepted body as it is on the bus,
// and sms_messages_intake's view maps it to sms_messages' columns. Against the embedded engine
// (chdb) and the product's migrations:
//  - every field of a message (unicode and escaped texts, NULLs, times, prices) reads back the
//    same as through the decoding path (MessageHistory.insert), property-tested;
//  - a row the view cannot store faithfully (a missing identifier or time, a wrong type, an
//    unreadable time) fails the insert, which stores nothing of it;
// both through chdb's own parser (ClickHouse.insertRaw, the in-process engine) and through the
// client's INSERT with a body (a ClickHouse server, the chdb of another process).
import fc from 'fast-check';
import { ACCEPTED_FRAME } from '../../core/bus';
import type { SmsMessage } from '../../core/sms/message';
import type { ClickHouse } from '../../infra/clickhouse';
import type { MessageHistory } from '../../stores/message-history';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';
import { acceptedRows, countMessages, intakePaths } from '../support/intake';
import { iso, makeMessage } from '../../support/message-rows';

let engine: EmbeddedClickHouse;
let ch: ClickHouse;

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('intake');
  ch = engine.ch;
}, 60_000);

afterAll(() => engine.close());

const framed = (messages: readonly object[]): Buffer => Buffer.concat([Buffer.from(ACCEPTED_FRAME.head), acceptedRows(messages), Buffer.from(ACCEPTED_FRAME.tail)]);

const count = (orgId: string): Promise<number> => countMessages(ch, orgId);

const time = fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 0, 1) }).map(iso);
const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('"quoted" \\ back\\slash', 'line\nbreak\ttab', '😀 ünïcödé', '{"messages":[]}', ''));
const messageFields = fc.record({
  clientId: fc.option(fc.string({ minLength: 1, maxLength: 40 }), { nil: null }),
  status: fc.constantFrom('queued', 'sent', 'delivered', 'canceled'),
  statusCode: fc.option(fc.integer({ min: -1, max: 999 }), { nil: null }),
  from: fc.string({ minLength: 1, maxLength: 11 }),
  text,
  deliveredText: text,
  unicode: fc.boolean(),
  allowUnicode: fc.boolean(),
  charged: fc.boolean(),
  messagesCount: fc.integer({ min: 1, max: 10 }),
  pricePerSmsMicros: fc.integer({ min: 0, max: 10_000_000_000 }),
  createdAt: time,
  chargedAt: fc.option(time, { nil: null }),
  scheduledAt: fc.option(time, { nil: null }),
  sentAt: fc.option(time, { nil: null }),
  deliveredAt: fc.option(time, { nil: null }),
});

const paths = intakePaths(() => ch);

describe.each(paths)('accepted messages stored as they travel (sms_messages_intake), through %s', (path, make) => {
  let history: MessageHistory;
  beforeAll(() => {
    history = make();
  });
  const org = (name: string): string => `${path.slice(0, 4)}-${name}`;

  it('reads back every field exactly as the decoding path stores it', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(messageFields, { minLength: 1, maxLength: 20 }), async (fields) => {
        round += 1;
        const raw = fields.map((f, i) => makeMessage({ ...f, orgId: org(`raw-${round}`), id: `00000000-0000-7000-8000-${String(round * 100 + i).padStart(12, '0')}` }));
        const decoded = raw.map((m) => ({ ...m, orgId: org(`dec-${round}`) }));
        // Two bus bodies, as two sms.accepted stream messages of one history batch.
        const half = Math.ceil(raw.length / 2);
        await history.insertAccepted([acceptedRows(raw.slice(0, half)), acceptedRows(raw.slice(half))]);
        await history.insert(decoded);
        for (const m of raw) {
          const viaRaw = await history.get({ orgId: m.orgId, projectId: null }, m.id);
          const viaDecode = await history.get({ orgId: org(`dec-${round}`), projectId: null }, m.id);
          expect(viaRaw).toEqual(m);
          expect(viaRaw).toEqual({ ...viaDecode, orgId: m.orgId });
        }
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('takes the inside of the frame the accepted queue writes, and ignores keys that are not columns', async () => {
    const m = { ...makeMessage({ orgId: org('frame'), source: 'smpp' }), receiptRequest: { registeredDelivery: 1, userMessageReference: 7 } };
    const body = framed([m]);
    await history.insertAccepted([body.subarray(ACCEPTED_FRAME.head.length, body.length - ACCEPTED_FRAME.tail.length)]);
    const { receiptRequest, ...stored } = m;
    expect(receiptRequest.registeredDelivery).toBe(1);
    expect(await history.get({ orgId: org('frame'), projectId: null }, m.id)).toEqual(stored);
  });

  const spoiled = (change: (m: SmsMessage) => object) => (): Buffer =>
    acceptedRows([makeMessage({ orgId: org('spoiled') }), change(makeMessage({ orgId: org('spoiled'), createdAt: iso(Date.UTC(2026, 10, 22, 13)) }))]);
  const refused: Array<[string, () => Buffer]> = [
    ['no orgId', spoiled(({ orgId: _, ...rest }) => rest)],
    ['an empty id', spoiled((m) => ({ ...m, id: '' }))],
    ['no createdAt', spoiled(({ createdAt: _, ...rest }) => rest)],
    ['an unreadable sentAt', spoiled((m) => ({ ...m, sentAt: 'yesterday-ish' }))],
    ['a text where a number belongs', spoiled((m) => ({ ...m, charsCount: 'many' }))],
    ['JSON cut short', () => Buffer.concat([acceptedRows([makeMessage({ orgId: org('spoiled') })]), Buffer.from(',{"id":')])],
  ];
  it.each(refused)('refuses a batch holding a message with %s, storing none of it', async (_name, rows) => {
    const before = await count(org('spoiled'));
    await expect(history.insertAccepted([rows()])).rejects.toThrow();
    expect(await count(org('spoiled'))).toBe(before);
  });
});
