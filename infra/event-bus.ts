// The EventBus port over JetStream: a publish returns once the stream has stored the message.
import type { JetStreamClient } from '@nats-io/jetstream';
import type { EventBus } from '../core/bus/ports';

export class JetStreamBus implements EventBus {
  constructor(private readonly js: JetStreamClient) {}

  async publish(subject: string, payload: unknown, msgId?: string): Promise<void> {
    await this.js.publish(subject, JSON.stringify(payload), msgId === undefined ? undefined : { msgID: msgId });
  }
}
