// The pipelined client's leader reads (infra/pipelined-jetstream.ts, leaderReads: what
// infra/nats.ts turns on for a cluster): the same entries, revisions and delete markers as a
// direct get, read through the stream leader. Run against the test stack's nats-server.
import { randomUUID } from 'node:crypto';
import { BUCKETS } from '../../core/bus/names';
import { createLogger } from '../../infra/logger';
import { connectNats, type Nats } from '../../infra/nats';
import { JetStreamPublishError, PipelinedJetStream } from '../../infra/pipelined-jetstream';
import { stack } from '../../support/stack';

const KV_STREAM = `KV_${BUCKETS.ratelimits}`;
const subject = (key: string): string => `$KV.${BUCKETS.ratelimits}.${key}`;
const text = (data: Uint8Array | null | undefined): string | undefined => (data ? new TextDecoder().decode(data) : undefined);

describe('pipelined JetStream client: reads through the stream leader', () => {
  let nats: Nats;
  let leader: PipelinedJetStream;

  beforeAll(async () => {
    nats = await connectNats({ servers: stack().natsUrl, replicas: 1, messageStateTtlHours: 1, name: 'leader-reads' }, createLogger('error'));
    leader = new PipelinedJetStream(nats.nc, 5000, true);
  });

  afterAll(async () => {
    leader.close();
    await nats.close();
  });

  test('an entry reads back with its value and revision, as by a direct get', async () => {
    const key = `leader.${randomUUID()}`;
    const ack = await nats.pipeline.publish(subject(key), 'value "with" \\ bytes é');
    const viaLeader = await leader.lastEntry(KV_STREAM, subject(key));
    const direct = await nats.pipeline.lastEntry(KV_STREAM, subject(key));
    expect({ value: text(viaLeader?.data), revision: viaLeader?.revision }).toEqual({ value: 'value "with" \\ bytes é', revision: ack.seq });
    expect({ value: text(direct?.data), revision: direct?.revision }).toEqual({ value: text(viaLeader?.data), revision: viaLeader?.revision });
    // A compare-and-set on the revision read through the leader succeeds.
    await expect(nats.pipeline.publishIfLast(subject(key), 'next', viaLeader?.revision ?? -1)).resolves.toMatchObject({ stream: KV_STREAM });
    expect(text(await leader.lastValue(KV_STREAM, subject(key)))).toBe('next');
  });

  test('a key never written and a deleted key read as null', async () => {
    const key = `leader.${randomUUID()}`;
    expect(await leader.lastEntry(KV_STREAM, subject(key))).toBeNull();
    await nats.kv.ratelimits.put(key, 'x');
    await nats.kv.ratelimits.delete(key);
    expect(await leader.lastValue(KV_STREAM, subject(key))).toBeNull();
    const marker = await leader.lastEntry(KV_STREAM, subject(key));
    expect({ empty: marker?.data.length, revision: (marker?.revision ?? 0) > 0 }).toEqual({ empty: 0, revision: true });
  });

  test('a stream that does not exist is an error, not an empty key', async () => {
    await expect(leader.lastEntry('NO_SUCH_STREAM', '$KV.nothing.here')).rejects.toBeInstanceOf(JetStreamPublishError);
  });
});
