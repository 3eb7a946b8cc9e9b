// Spec 3 §2.4: the reference evaluator (test/support/grammar-b-evaluator.ts) against the
// hand-written answers of test/support/grammar-b-cases.ts. The same table runs against
// ClickHouse in test/integration/grammar-b-clickhouse.test.ts.
import { AUTUMN_CASES, AUTUMN_CONTACTS, AUTUMN_NOW, AUTUMN_TZ, CASES, CONTACTS, EVENTS, NOW, SEGMENTS, TZ } from '../support/grammar-b-cases';
import { evaluate, type World } from '../support/grammar-b-evaluator';

const world: World = { tz: TZ, now: NOW.getTime(), segments: SEGMENTS, eventsOf: (u) => EVENTS.filter((e) => e.userId === u) };

describe('spec 3 §2.4 Grammar B operators: reference evaluator on hand-written answers', () => {
  test.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(evaluate({ version: '0.0.1', root: c.root }, CONTACTS, 'p1', world)).toEqual([...c.expected].sort());
  });
});

describe('spec 3 §2.4 Grammar B dates on the autumn DST day (America/New_York): reference evaluator', () => {
  const autumn: World = { tz: AUTUMN_TZ, now: AUTUMN_NOW.getTime(), segments: new Map(), eventsOf: () => [] };
  test.each(AUTUMN_CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(evaluate({ version: '0.0.1', root: c.root }, AUTUMN_CONTACTS, 'p3', autumn)).toEqual([...c.expected].sort());
  });
});

