// The gateway's side of the INGEST stream: one JetStream publish per accepted request (the
// 202 is sent only after the stream has it on disk), and a wait for the ingest writer's
// progress so that a DELETE answers once the contact is gone from every query.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { IngestMessage } from '../core/ingest';
import type { IngestBus } from '../core/ingest/ports';
import { INGEST_STATE_KEYS, SUBJECTS } from '../core/bus/names';

export class JetStreamIngestBus implements IngestBus {
  constructor(private readonly js: JetStreamClient, private readonly state: KV) {}

  /** Publishes one message and returns its stream sequence once it is stored. */
  async publish(message: IngestMessage): Promise<number> {
    const subject = message.kind === 'contacts' ? SUBJECTS.ingestContacts(message.projectId, message.datasourceId)
      : message.kind === 'events' ? SUBJECTS.ingestEvents(message.projectId, message.datasourceId)
        : message.kind === 'delete' ? SUBJECTS.ingestDelete(message.projectId, message.datasourceId)
          : SUBJECTS.ingestRejected(message.projectId, message.datasourceId);
    const ack = await this.js.publish(subject, JSON.stringify(message));
    return ack.seq;
  }

  /** Resolves true once the ingest writer has applied stream sequence `seq`, false after `timeoutMs`. */
  async waitApplied(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const entry = await this.state.get(INGEST_STATE_KEYS.applied);
      if (entry && entry.operation === 'PUT' && Number(entry.string()) >= seq) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}
