// A batch lifecycle's memo (core/bus/temporal.ts): the ids it holds for the Temporal UI, kept
// under the server's 2 KB memo warning, and how many messages the batch was started with.
import { defaultPayloadConverter } from '@temporalio/common';
import { BATCH_MEMO_COUNT, BATCH_MEMO_MESSAGES, batchMemo } from '../../core/bus';

const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`);
const encodedSize = (memo: Record<string, unknown>): number =>
  Object.values(memo).reduce<number>((sum, value) => {
    const payload = defaultPayloadConverter.toPayload(value);
    return sum + (payload.data?.length ?? 0) + Object.entries(payload.metadata ?? {}).reduce((m, [k, v]) => m + k.length + v.length, 0);
  }, 0);

describe('batch lifecycle memo (docs/lifecycle.md)', () => {
  test('a small batch lists every id', () => {
    expect(batchMemo(ids(3))).toEqual({ [BATCH_MEMO_MESSAGES]: ids(3).join(' '), [BATCH_MEMO_COUNT]: 3 });
  });

  test('a batch of 500 lists the first ids that fit, says how many it holds, and stays under 2 KB', () => {
    const memo = batchMemo(ids(500));
    const listed = String(memo[BATCH_MEMO_MESSAGES]).split(' ');
    expect(listed.length).toBeGreaterThan(30);
    expect(listed).toEqual(ids(500).slice(0, listed.length));
    expect(memo[BATCH_MEMO_COUNT]).toBe(500);
    expect(encodedSize(memo)).toBeLessThan(2048);
  });
});
