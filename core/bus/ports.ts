// The bus as the core and the activities see it: publish a payload of the contract on a
// subject. infra/bus/event-bus.ts implements it over JetStream.

export interface EventBus {
  /** Stores the payload on the subject's stream; `msgId` makes a repeat within the duplicate window a no-op. */
  publish(subject: string, payload: unknown, msgId?: string): Promise<void>;
}
