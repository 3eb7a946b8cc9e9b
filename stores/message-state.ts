// The current state of recent messages in the `messages` KV bucket (read-your-writes for GET
// by id at KV speed; DESIGN §3a). Writes and reads go through the process's pipelined
// JetStream client (infra/pipelined-jetstream.ts); the accepted states of a request (or of one
// event-loop turn of single sends) are one record (stores/state-writes.ts). The other stores of
// the acceptance path: clientId claims (./client-ids.ts), opt-outs (./opt-outs.ts); the
// accepted-message queue is on the bus (infra/bus/accepted-queue.ts).
import { decode } from '../core/bus/decode';
import type { CurrentReader, MessageStates, SmsMessage } from '../core/sms';
import { BUCKETS, KV_KEYS } from '../core/bus/names';
import { encodedMessage } from '../infra/bus/accepted-queue';
import type { PipelinedJetStream } from '../infra/pipelined-jetstream';
import { kvStream, kvSubject } from './kv-cas';
import { StateBatches } from './state-batches';
import { StateWrites } from './state-writes';

const MESSAGES_STREAM = kvStream(BUCKETS.messages);
const MESSAGE_ID = /^[0-9a-f-]{36}$/;

export class KvMessageStates implements MessageStates, CurrentReader<SmsMessage> {
  private readonly batches: StateBatches;
  private readonly writes: StateWrites;

  constructor(private readonly jetstream: PipelinedJetStream) {
    this.batches = new StateBatches((key) => jetstream.lastValue(MESSAGES_STREAM, kvSubject(BUCKETS.messages, key)));
    this.writes = new StateWrites(jetstream, encodedMessage);
  }

  /** One request's new messages (stores/state-writes.ts: one record per request or per turn of single sends). */
  putAll(messages: readonly SmsMessage[]): Promise<void> {
    return this.writes.put(messages);
  }

  /** The message's own state, else its state as accepted in its request's record. */
  async get(id: string): Promise<SmsMessage | null> {
    if (!MESSAGE_ID.test(id)) return null;
    const value = await this.jetstream.lastValue(MESSAGES_STREAM, kvSubject(BUCKETS.messages, KV_KEYS.messageState(id)));
    if (value) return decode('messageState', value);
    const accepted = await this.batches.find(id);
    return accepted ? decode('messageState', accepted) : null;
  }
}
