// INGEST `eventRows` frames of format 1, as gateways at e85495d wrote them (core/ingest/event-rows.ts
// at e85495d, eventTextsOf and encodeEventRows copied, one frame, no split): a header line with,
// per event, [user id, event id, 0/1 triggers, `_user_data` or null], then per event its whole
// row head (`[…,`: every column but the version) and, for a trigger-worthy event, its whole
// trigger JSON. Frames of this format may still be on the stream when a writer of format 2 starts.
import { audienceId, type EventRecord, type IngestEventsMessage, type TypedValue } from '../../core/ingest';

const clickHouseTime = (iso: string): string => (iso.length === 24 && iso[10] === 'T' && iso[23] === 'Z' ? `${iso.slice(0, 10)} ${iso.slice(11, 23)}` : iso.replace('T', ' ').replace('Z', ''));
const MAP_OF: Readonly<Record<TypedValue['type'], number>> = { string: 0, number: 1, boolean: 2, date: 3, array: 4, object: 5, geopoint: 5 };

function eventTextsOf(projectId: string, datasourceId: string, receivedAt: string): (audience: string, event: EventRecord) => { row: string; trigger: string | null } {
  const head = `[${JSON.stringify(projectId)},${JSON.stringify(datasourceId)},`;
  const received = JSON.stringify(clickHouseTime(receivedAt));
  const types = new Map<string, string>();
  return (audience, event) => {
    let type = types.get(event.eventType);
    if (type === undefined) {
      type = JSON.stringify(event.eventType);
      types.set(event.eventType, type);
    }
    const user = JSON.stringify(event.userId);
    const id = JSON.stringify(event.eventId);
    const aud = JSON.stringify(audience);
    const maps = ['', '', '', '', '', ''];
    let params = '';
    for (const name in event.parameters) {
      const typed = event.parameters[name] as TypedValue;
      const key = JSON.stringify(name);
      const index = MAP_OF[typed.type];
      let stored: string;
      let plain: string;
      if (typed.type === 'date') {
        plain = JSON.stringify(typed.value);
        stored = JSON.stringify(clickHouseTime(typed.value as string));
      } else if (index === 5) {
        plain = JSON.stringify(typed.value);
        stored = JSON.stringify(plain);
      } else {
        plain = JSON.stringify(typed.value);
        stored = plain;
      }
      maps[index] += `${maps[index] === '' ? '' : ','}${key}:${stored}`;
      if (event.triggers) params += `${params === '' ? '' : ','}${key}:${plain}`;
    }
    const row = `${head}${type},${user},${aud},${id},${JSON.stringify(clickHouseTime(event.eventDate))},${received},"api",{${maps[0]}},{${maps[1]}},{${maps[2]}},{${maps[3]}},{${maps[4]}},{${maps[5]}},`;
    const trigger = event.triggers
      ? `{"audienceId":${aud},"_user_id":${user},"_event_id":${id},"_event_type":${type},"_event_date":${JSON.stringify(event.eventDate)},"_event_parameters":{${params}}}`
      : null;
    return { row, trigger };
  };
}

/** The events message as one format-1 frame (e85495d's bytes). */
export function encodeEventRowsV1(message: IngestEventsMessage): Buffer {
  const texts = eventTextsOf(message.projectId, message.datasourceId, message.receivedAt);
  const items = message.items.map(({ event, userData }) => {
    const { row, trigger } = texts(audienceId(message.projectId, event.userId), event);
    return { meta: [event.userId, event.eventId, trigger === null ? 0 : 1, userData], lines: trigger === null ? `${row}\n` : `${row}\n${trigger}\n` };
  });
  const header = {
    kind: 'eventRows', orgId: message.orgId, projectId: message.projectId, datasourceId: message.datasourceId, receivedAt: message.receivedAt,
    failed: message.failed, items: items.map((g) => g.meta),
  };
  let text = `${JSON.stringify(header)}\n`;
  for (const g of items) text += g.lines;
  return Buffer.from(text);
}
