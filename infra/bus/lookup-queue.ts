// The `lookup.created` queue: each lookup goes to the stream once (msgID `lookup-<id>`), with its
// charge hold in the Sms-Charge-Holds header (the charge settler settles it from there;
// docs/acceptance.md "Charges held until the stream has them"), through the process's pipelined
// JetStream client (../pipelined-jetstream.ts).
import { formatHoldRefs, HEADERS, SUBJECTS, type HoldRef } from '../../core/bus/names';
import type { Lookup } from '../../core/lookup';
import type { PipelinedJetStream } from '../pipelined-jetstream';
import { unconfirmedAsUnknown } from './accepted-queue';

export class JetStreamLookupQueue {
  constructor(private readonly jetstream: PipelinedJetStream) {}

  /**
   * Resolves once the stream has stored the lookup. A publish the bus took but did not confirm
   * (no ack in time, the publisher closed) rejects with OutcomeUnknownError: it may be stored, so
   * the charge stays held; a refusal the bus answered (no responders, an API error) as it is.
   */
  async publish(lookup: Lookup, hold?: HoldRef): Promise<void> {
    try {
      await this.jetstream.publish(SUBJECTS.lookupCreated, JSON.stringify({ lookups: [lookup] }), `lookup-${lookup.id}`,
        hold ? { [HEADERS.chargeHolds]: formatHoldRefs([hold]) } : undefined);
    } catch (err) {
      throw unconfirmedAsUnknown(SUBJECTS.lookupCreated, err);
    }
  }
}
