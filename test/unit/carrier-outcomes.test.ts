import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_OUTCOME, ESME_RSUBMITFAIL, outcomeFor, SIMULATOR_OUTCOMES, type SimulatorOutcome } from '../../core/carrier/simulator-outcomes';

describe('DESIGN §6 carrier simulator: outcome table', () => {
  test('the default path is ENROUTE then DELIVRD', () => {
    expect(outcomeFor('+447700900123')).toBe(DEFAULT_OUTCOME);
    expect(DEFAULT_OUTCOME.submitStatus).toBe(0);
    expect(DEFAULT_OUTCOME.receipts).toEqual([{ state: 'ENROUTE', err: 0 }, { state: 'DELIVRD', err: 0 }]);
  });

  test.each([
    ['89', 0, [['ENROUTE', 0], ['UNDELIV', 8]]],
    ['90', 0, [['UNDELIV', 2]]],
    ['91', 0, [['UNDELIV', 3]]],
    ['92', 0, [['REJECTD', 6]]],
    ['93', 0, [['EXPIRED', 1]]],
    ['94', 0, []],
    ['95', 0x45, []],
    ['96', 0, [['ACCEPTD', 0], ['DELIVRD', 0]]],
    ['97', 0, [['UNKNOWN', 99]]],
    ['98', 0, [['DELETED', 0]]],
  ] as const)('a number ending in %s', (ending, submitStatus, receipts) => {
    const outcome = outcomeFor(`+4477009001${ending}`);
    expect(outcome).toBe(SIMULATOR_OUTCOMES[ending]);
    expect(outcome.submitStatus).toBe(submitStatus);
    expect(outcome.receipts.map((r) => [r.state, r.err])).toEqual(receipts);
  });

  test('only the digits count; the refusal is ESME_RSUBMITFAIL', () => {
    expect(outcomeFor('44 7700 9001 95')).toBe(outcomeFor('+447700900195'));
    expect(outcomeFor('447700900195').submitStatus).toBe(ESME_RSUBMITFAIL);
    expect(ESME_RSUBMITFAIL).toBe(0x45);
    expect(outcomeFor('')).toBe(DEFAULT_OUTCOME);
    expect(outcomeFor('9')).toBe(DEFAULT_OUTCOME);
  });
});

describe('DESIGN §6 carrier simulator: the table in docs/carrier.md', () => {
  const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'carrier.md'), 'utf8');
  const row = (first: string): string[] | undefined =>
    doc.split('\n').find((line) => line.startsWith(`| ${first} |`))?.split('|').slice(1, -1).map((cell) => cell.trim());
  const receipts = (outcome: SimulatorOutcome): string => outcome.receipts.map((r) => `${r.state} ${String(r.err).padStart(3, '0')}`).join(', ') || 'none';

  test.each(Object.entries(SIMULATOR_OUTCOMES))('the row for %s matches the simulator', (ending, outcome) => {
    const cells = row(ending);
    expect(cells?.[1]).toBe(outcome.name);
    expect(cells?.[2]).toBe(outcome.submitStatus === 0 ? 'OK + message_id' : `command_status 0x${outcome.submitStatus.toString(16).padStart(8, '0')}, no message_id`);
    expect(cells?.[3]).toBe(receipts(outcome));
  });

  test('the default row matches the simulator', () => {
    expect(row('any other')?.slice(1, 4)).toEqual([DEFAULT_OUTCOME.name, 'OK + message_id', receipts(DEFAULT_OUTCOME)]);
  });
});
