// Spec 3 §2.4: the reference evaluator (test/support/grammar-b-evaluator.ts) against the
// hand-written answers of test/support/grammar-b-cases.ts. The same table runs against
// ClickHouse in test/integration/grammar-b-clickhouse.test.ts.
import { CASES, CONTACTS, EVENTS, NOW, SEGMENTS, TZ } from '../support/grammar-b-cases';
import { evaluate, type World } from '../support/grammar-b-evaluator';

const world: World = { tz: TZ, now: NOW.getTime(), segments: SEGMENTS, eventsOf: (u) => EVENTS.filter((e) => e.userId === u) };

describe('spec 3 §2.4 Grammar B operators: reference evaluator on hand-written answers', () => {
  test.each(CASES.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(evaluate({ version: '0.0.1', root: c.root }, CONTACTS, 'p1', world)).toEqual([...c.expected].sort());
  });
});
