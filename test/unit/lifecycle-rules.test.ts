// The message state machine (spec 1 §3, DESIGN §4 receipt mapping, docs/lifecycle.md).
import type { CarrierEvent, ReceiptState } from '../../core/carrier/types';
import { aggregate, applyEvent, errToCode, initialState, isFinal, progressRank, refundable, transitionsBetween, type MessageState } from '../../core/sms/lifecycle-rules';

const at = '2026-11-22T00:00:00.000Z';
const submitted = (segment = 0, segments = 1): CarrierEvent => ({ kind: 'submitted', messageId: 'm', segment, segments, carrier: 'c', carrierMessageId: `c${segment}`, at });
const receipt = (state: ReceiptState, err = 0, segment = 0, segments = 1): CarrierEvent => ({ kind: 'receipt', messageId: 'm', segment, segments, carrier: 'c', carrierMessageId: `c${segment}`, state, err, at });
const refused = (commandStatus: number | null, segment = 0): CarrierEvent => ({ kind: 'submit_failed', messageId: 'm', segment, segments: 1, carrier: 'c', commandStatus, reason: 'x', at });
const run = (segments: number, events: CarrierEvent[]): MessageState => events.reduce(applyEvent, initialState(segments));

describe('DESIGN §4 receipt mapping', () => {
  test.each([
    ['ENROUTE', 'buffered', 0], ['DELIVRD', 'delivered', 0], ['EXPIRED', 'expired', 1], ['DELETED', 'canceled', 0],
    ['UNDELIV', 'failed', 2], ['ACCEPTD', 'accepted', 0], ['UNKNOWN', 'unknown', 99], ['REJECTD', 'rejected', 6],
  ] as const)('%s → %s', (state, status, err) => {
    expect(aggregate(run(1, [submitted(), receipt(state, err)]))).toEqual({ status, code: ['failed', 'rejected', 'expired', 'unknown', 'canceled'].includes(status) ? err : 0 });
  });
  test('a successful submit_sm_resp → sent; a refused one → error 100; no route → error 11', () => {
    expect(aggregate(run(1, [submitted()]))).toEqual({ status: 'sent', code: 0 });
    expect(aggregate(run(1, [refused(0x45)]))).toEqual({ status: 'error', code: 100 });
    expect(aggregate(run(1, [refused(null)]))).toEqual({ status: 'error', code: 11 });
  });
  test('receipt err codes of spec 1 §2.6 pass through; others become 99', () => {
    expect([0, 8, 16, 99, 100, 17, 255].map(errToCode)).toEqual([0, 8, 16, 99, 100, 99, 99]);
  });
});

describe('spec 1 §3: a segment moves forward only, and a final segment never changes', () => {
  test('a late ENROUTE after DELIVRD changes nothing; a duplicate receipt changes nothing', () => {
    const done = run(1, [submitted(), receipt('DELIVRD')]);
    expect(applyEvent(done, receipt('ENROUTE'))).toBe(done);
    expect(applyEvent(done, receipt('DELIVRD'))).toBe(done);
    expect(isFinal(aggregate(done).status)).toBe(true);
  });
  test('ACCEPTD after ENROUTE does not move a segment backwards', () => {
    expect(aggregate(run(1, [submitted(), receipt('ENROUTE'), receipt('ACCEPTD')])).status).toBe('buffered');
  });
});

describe('docs/lifecycle.md aggregate rule for multi-segment messages', () => {
  test('delivered only when every segment is delivered; meanwhile as far as the least advanced', () => {
    const s = run(2, [submitted(0, 2), submitted(1, 2), receipt('DELIVRD', 0, 0, 2)]);
    expect(aggregate(s).status).toBe('sent');
    expect(aggregate(applyEvent(s, receipt('ENROUTE', 0, 1, 2))).status).toBe('buffered');
    expect(aggregate(applyEvent(s, receipt('DELIVRD', 0, 1, 2)))).toEqual({ status: 'delivered', code: 0 });
  });
  test('the first segment to fail decides, even if a later one fails differently', () => {
    const s = run(3, [submitted(0, 3), submitted(1, 3), submitted(2, 3), receipt('UNDELIV', 3, 1, 3), receipt('REJECTD', 6, 2, 3), receipt('DELIVRD', 0, 0, 3)]);
    expect(aggregate(s)).toEqual({ status: 'failed', code: 3 });
  });
});

describe('DESIGN §4 refunds: error before reaching any carrier', () => {
  test('refunded when no segment was accepted by a carrier', () => {
    expect(refundable(run(1, [refused(0x45)]))).toBe(true);
    expect(refundable(run(1, [refused(null)]))).toBe(true);
  });
  test('not refunded once a carrier accepted a segment, nor for other failures', () => {
    expect(refundable(run(2, [submitted(0, 2), refused(0x45, 1)]))).toBe(false);
    expect(refundable(run(1, [submitted(), receipt('UNDELIV', 2)]))).toBe(false);
  });
});

describe('transitions reported between aggregates', () => {
  test('a report that overtakes the submit acknowledgement still yields sent first', () => {
    expect(transitionsBetween('queued', 'buffered')).toEqual(['sent', 'buffered']);
    expect(transitionsBetween('queued', 'delivered')).toEqual(['sent', 'delivered']);
    expect(transitionsBetween('queued', 'failed')).toEqual(['sent', 'failed']);
  });
  test('error never implies sent; the same status reports nothing', () => {
    expect(transitionsBetween('queued', 'error')).toEqual(['error']);
    expect(transitionsBetween('queued', 'sent')).toEqual(['sent']);
    expect(transitionsBetween('sent', 'sent')).toEqual([]);
    expect(transitionsBetween('sent', 'buffered')).toEqual(['buffered']);
  });
});

describe('progress rank guards the KV state against stale writes (activities/lifecycle.ts settle)', () => {
  test('queued < sent < accepted < buffered < every final status', () => {
    expect(['queued', 'sent', 'accepted', 'buffered'].map((s) => progressRank(s as never))).toEqual([0, 1, 2, 3]);
    for (const final of ['delivered', 'failed', 'expired', 'canceled', 'rejected', 'error', 'unknown'] as const) {
      expect(progressRank(final)).toBe(4);
      expect(progressRank(final)).toBeGreaterThan(progressRank('buffered'));
    }
  });

  test('every status sequence the rules produce has a non-decreasing rank', () => {
    let state = initialState(2);
    let previous = progressRank(aggregate(state).status);
    const events: CarrierEvent[] = [
      { kind: 'submitted', messageId: 'm', segment: 0, segments: 2, carrier: 'sim', carrierMessageId: 'c0', at: '2026-11-22T00:00:00.000Z' },
      { kind: 'submitted', messageId: 'm', segment: 1, segments: 2, carrier: 'sim', carrierMessageId: 'c1', at: '2026-11-22T00:00:00.000Z' },
      { kind: 'receipt', messageId: 'm', segment: 1, segments: 2, carrier: 'sim', carrierMessageId: 'c1', state: 'DELIVRD', err: 0, at: '2026-11-22T00:00:01.000Z' },
      { kind: 'receipt', messageId: 'm', segment: 0, segments: 2, carrier: 'sim', carrierMessageId: 'c0', state: 'ENROUTE', err: 0, at: '2026-11-22T00:00:01.000Z' },
      { kind: 'receipt', messageId: 'm', segment: 0, segments: 2, carrier: 'sim', carrierMessageId: 'c0', state: 'DELIVRD', err: 0, at: '2026-11-22T00:00:02.000Z' },
    ];
    for (const event of events) {
      state = applyEvent(state, event);
      const rank = progressRank(aggregate(state).status);
      expect(rank).toBeGreaterThanOrEqual(previous);
      previous = rank;
    }
    expect(aggregate(state).status).toBe('delivered');
  });
});
