// The EventBus port (core/bus/ports.ts) over the process's pipelined JetStream client
// (../pipelined-jetstream.ts): a publish returns once the stream has stored the message, without
// the client library's request object, timer and Error per call.
import type { EventBus } from '../../core/bus/ports';
import type { PipelinedJetStream } from '../pipelined-jetstream';

export class PipelinedBus implements EventBus {
  constructor(private readonly jetstream: PipelinedJetStream) {}

  async publish(subject: string, payload: unknown, msgId?: string): Promise<void> {
    await this.jetstream.publish(subject, JSON.stringify(payload), msgId);
  }

  /** Publishes a payload already serialized as JSON (the ingest writer's automation triggers: core/ingest/apply.ts). */
  async publishBytes(subject: string, data: Uint8Array, msgId?: string): Promise<void> {
    await this.jetstream.publish(subject, data, msgId);
  }
}
