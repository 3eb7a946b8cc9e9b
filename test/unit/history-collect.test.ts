// How the history writer reads a run of stream messages (pipelines/history-writer.ts collect):
// an sms.accepted body written by the acceptance path (its frame, and its Sms-Accepted-Sources
// header, core/bus/names.ts) is handed to ClickHouse as it is, counted from the header; any
// other accepted body is decoded and checked against its schema, as every status change is.
import type { JsMsg } from '@nats-io/jetstream';
import { ACCEPTED_FRAME, formatSourceCounts, HEADERS, parseSourceCounts, SUBJECTS } from '../../core/bus';
import { createLogger } from '../../infra/logger';
import { collect } from '../../pipelines/history-writer';
import { makeMessage } from '../../support/message-rows';

const log = createLogger('silent');

function streamMessage(subject: string, body: string, headers: Record<string, string> = {}): JsMsg {
  return { subject, data: Buffer.from(body), seq: 1, headers: { get: (name: string) => headers[name] ?? '' } } as unknown as JsMsg;
}

const one = makeMessage({ source: 'http' });
const two = makeMessage({ source: 'smpp', id: '00000000-0000-7000-8000-000000000002' });
const body = `${ACCEPTED_FRAME.head}${JSON.stringify(one)},${JSON.stringify(two)}${ACCEPTED_FRAME.tail}`;

describe('history writer: collecting a run of stream messages', () => {
  it('hands over the messages of a framed sms.accepted body with its sources header without decoding them', () => {
    const batch = collect([streamMessage(SUBJECTS.smsAccepted, body, { [HEADERS.acceptedSources]: 'http=1 smpp=1' })], log);
    expect(batch.messages).toEqual([]);
    expect(batch.acceptedRowCount).toBe(2);
    expect(batch.accepted).toEqual(new Map([['http', 1], ['smpp', 1]]));
    expect(Buffer.from(batch.acceptedRows[0]!).toString()).toBe(`${JSON.stringify(one)},${JSON.stringify(two)}`);
  });

  it('decodes an accepted body without the header (an older publisher) and counts it by source', () => {
    const batch = collect([streamMessage(SUBJECTS.smsAccepted, body)], log);
    expect(batch.acceptedRows).toEqual([]);
    expect(batch.messages).toEqual([one, two]);
    expect(batch.accepted).toEqual(new Map([['http', 1], ['smpp', 1]]));
  });

  it.each([
    ['another frame: decoded', JSON.stringify({ messages: [one, two] }, null, 1), [one, two]],
    ['a body shorter than the frame: not a payload, skipped', '{"messages":[]', []],
  ])('an accepted body in %s', (_name, other, decoded) => {
    const batch = collect([streamMessage(SUBJECTS.smsAccepted, other as string, { [HEADERS.acceptedSources]: 'http=2' })], log);
    expect(batch.acceptedRows).toEqual([]);
    expect(batch.acceptedRowCount).toBe(0);
    expect(batch.messages).toEqual(decoded);
  });

  it('decodes an accepted body whose header is unreadable', () => {
    const batch = collect([streamMessage(SUBJECTS.smsAccepted, body, { [HEADERS.acceptedSources]: 'http=two' })], log);
    expect(batch.acceptedRows).toEqual([]);
    expect(batch.messages).toEqual([one, two]);
  });

  it('formats and reads the sources header', () => {
    expect(formatSourceCounts(new Map([['http', 98], ['smpp', 2]]))).toBe('http=98 smpp=2');
    expect(parseSourceCounts('http=98 smpp=2')).toEqual(new Map([['http', 98], ['smpp', 2]]));
    for (const bad of ['', 'http', 'http=0', 'http=-1', 'http=1  smpp=1', 'HTTP=1', 'http=1e3']) expect(parseSourceCounts(bad)).toBeNull();
  });
});
