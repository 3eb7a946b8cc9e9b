// DESIGN §4 Scheduling: a message's own validityPeriod reaches its lifecycle workflow's input
// (pipelines/lifecycle-bridge.ts lifecycleStarts), and one without it starts exactly as before
// (the same input, so recorded histories and running workflows are unchanged).
import Ajv from 'ajv';
import { BUS_SCHEMAS } from '../../core/bus/payloads';
import { lifecycleStarts } from '../../pipelines/lifecycle-bridge';
import { deadlineOf } from '../../workflows/batch-track';
import type { WebhookSchedule } from '../../workflows/presets';
import { makeMessage } from '../../support/message-rows';

const webhook = { attempts: 3 } as unknown as WebhookSchedule;
const id = (n: number): string => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const own = makeMessage({ id: id(1), validityPeriod: 60 });
const usual = makeMessage({ id: id(2) });

describe('DESIGN §4 Scheduling: validityPeriod flows through the accepted message', () => {
  test('one workflow per message: its validityMs is the message\'s own, else the default', () => {
    const starts = lifecycleStarts([own, usual], { batchMax: 1, validityMs: 15_000, webhook });
    expect(starts.map((s) => (s.kind === 'message' ? s.input.validityMs : null))).toEqual([60_000, 15_000]);
  });

  test('a batch: the member with its own carries validityMs, the other has no such key; the batch keeps the default', () => {
    const [start] = lifecycleStarts([own, usual], { batchMax: 10, validityMs: 15_000, webhook });
    if (start?.kind !== 'batch') throw new Error('expected a batch start');
    expect(start.input.validityMs).toBe(15_000);
    expect(start.input.members[0]?.validityMs).toBe(60_000);
    expect(start.input.members[1] && 'validityMs' in start.input.members[1]).toBe(false);
  });

  test('a member\'s deadline: its own period from the batch start, else the batch deadline', () => {
    const [start] = lifecycleStarts([own, usual], { batchMax: 10, validityMs: 15_000, webhook });
    if (start?.kind !== 'batch') throw new Error('expected a batch start');
    const [a, b] = start.input.members;
    expect(a && deadlineOf(a, 1_000, 16_000)).toBe(61_000);
    expect(b && deadlineOf(b, 1_000, 16_000)).toBe(16_000);
  });

  test('the bus schema of an accepted message takes the optional field, and messages without it still validate', () => {
    const validate = new Ajv({ strict: false }).compile(BUS_SCHEMAS.accepted);
    expect(validate({ messages: [own, usual] })).toBe(true);
    expect(validate({ messages: [{ ...own, validityPeriod: 'soon' }] })).toBe(false);
  });
});
