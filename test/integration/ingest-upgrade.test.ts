// A rolling upgrade of the INGEST payload (core/ingest/event-rows.ts): events messages of the
// earlier format (one JSON object of kind `events`, as gateways wrote them before eventRows
// frames) and frames of format 1 (as gateways at e85495d wrote them) still on the stream are
// applied by the writer, beside frames the gateway writes now,
// against the real stack: the contact `_user_data` creates, its events stored once (spec 2
// §2.2: an id sent again in a frame is a duplicate), and one automation trigger per
// trigger-worthy event (spec 2 §4 rule 6).
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { IngestEventsMessage } from '../../core/bus/ingest';
import { STREAMS, SUBJECTS } from '../../core/bus/names';
import { ingestWriterCaughtUp } from '../support/bus-conditions';
import { eventually } from '../../support/eventually';
import { encodeEventRowsV1 } from '../support/event-rows-v1';
import { createIngestTenant } from '../support/ingest';
import { api, stack } from '../../support/stack';

jest.setTimeout(60_000);

let nc: NatsConnection;
let js: JetStreamClient;
beforeAll(async () => {
  nc = await connect({ servers: stack().natsUrl });
  js = jetstream(nc);
});
afterAll(async () => { await nc.close(); });

interface Trigger { _event_id: string; _user_id: string; _event_type: string; _event_parameters: Record<string, unknown> }

async function triggersOf(projectId: string): Promise<Trigger[]> {
  const consumer = await js.consumers.get(STREAMS.automation.name, { filter_subjects: [SUBJECTS.automationTrigger(projectId)] });
  const found: Trigger[] = [];
  let pending = (await consumer.info()).num_pending;
  while (pending > 0) {
    const batch = await consumer.fetch({ max_messages: Math.min(pending, 500), expires: 2000 });
    let got = 0;
    for await (const m of batch) {
      found.push(...m.json<{ triggers: Trigger[] }>().triggers);
      got += 1;
    }
    if (got === 0) break;
    pending -= got;
  }
  return found;
}

describe('INGEST messages of the earlier format and format-1 frames on the stream (a rolling upgrade)', () => {
  test('applied beside eventRows frames: contact from _user_data, events once, one trigger per trigger-worthy event', async () => {
    const t = await createIngestTenant();
    const receivedAt = new Date().toISOString();
    const old: IngestEventsMessage = {
      kind: 'events', orgId: t.orgId, projectId: t.projectId, datasourceId: t.datasourceId, receivedAt, failed: 0,
      items: [
        { event: { userId: 'legacy', eventId: 'old-1', eventType: 'purchase', eventDate: receivedAt, triggers: true, parameters: { amount: { type: 'number', value: 5 }, note: { type: 'string', value: 'a "quoted"\nline' } } },
          userData: { userId: 'legacy', attributes: { _first_name: { type: 'string', value: 'Ada' } } } },
        { event: { userId: 'legacy', eventId: 'old-2', eventType: 'view', eventDate: '2026-01-01T00:00:00.000Z', triggers: false, parameters: {} }, userData: null },
      ],
    };
    await js.publish(SUBJECTS.ingestEvents(t.projectId, t.datasourceId), Buffer.from(JSON.stringify(old)));
    // A format-1 frame: one id of the earlier message again (a duplicate), one new.
    const v1: IngestEventsMessage = { ...old, items: [
      { event: { userId: 'legacy', eventId: 'old-2', eventType: 'view', eventDate: receivedAt, triggers: true, parameters: {} }, userData: null },
      { event: { userId: 'legacy', eventId: 'v1-1', eventType: 'view', eventDate: receivedAt, triggers: true, parameters: { sku: { type: 'string', value: 'ü "x"' } } }, userData: null },
    ] };
    await js.publish(SUBJECTS.ingestEvents(t.projectId, t.datasourceId), encodeEventRowsV1(v1));
    // Then the gateway's frames: one id of the earlier message again (a duplicate), one new.
    const res = await api(`${t.base}/events`, { token: t.token, body: [
      { _user_id: 'legacy', _event_id: 'old-1', _event_type: 'purchase', _event_parameters: { amount: 5 } },
      { _user_id: 'legacy', _event_id: 'new-1', _event_type: 'purchase', _event_parameters: { amount: 7 } },
    ] });
    expect(res.status).toBe(202);
    await ingestWriterCaughtUp('the earlier-format message and the frames applied');
    const contact = await eventually(() => api(`${t.base}/contacts/legacy`, { token: t.token }), {
      what: 'the contact with its 4 events', until: (r) => r.status === 200 && (r.body as { entity: { events: number } }).entity.events === 4, timeoutMs: 15_000,
    });
    expect((contact.body as { entity: { attributes: Record<string, unknown> } }).entity.attributes['_first_name']).toBe('Ada');
    const usage = await api(t.base, { token: t.token });
    expect((usage.body as { usage: { lastHour: { events: Record<string, number> } } }).usage.lastHour.events).toEqual(expect.objectContaining({ requests: 3, accepted: 4, duplicates: 2 }));
    const triggers = await triggersOf(t.projectId);
    expect(triggers.map((x) => x._event_id).sort()).toEqual(['new-1', 'old-1', 'v1-1']);
    expect(triggers.find((x) => x._event_id === 'v1-1')).toMatchObject({ _user_id: 'legacy', _event_type: 'view', _event_parameters: { sku: 'ü "x"' } });
    expect(triggers.find((x) => x._event_id === 'new-1')).toMatchObject({ _user_id: 'legacy', _event_type: 'purchase', _event_parameters: { amount: 7 } });
    expect(triggers.find((x) => x._event_id === 'old-1')).toMatchObject({ _user_id: 'legacy', _event_type: 'purchase', _event_parameters: { amount: 5, note: 'a "quoted"\nline' } });
  });
});
