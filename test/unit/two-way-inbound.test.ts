// Two-way (DESIGN "Two-way", spec 1 §2.2, §2.6): an inbound message's DLR names who sent it and
// to which of our numbers, and the message is stored as a message of direction `inbound` that
// GET /sms/{id} and GET /sms (direction_eq) answer. The rules without engines: the route's DLR,
// the message id, the history row and its mapping to ClickHouse columns, the writer's collect,
// the Grammar A field and the OpenAPI schemas.
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import type { JsMsg } from '@nats-io/jetstream';
import { SUBJECTS, type InboundRecord } from '../../core/bus';
import type { Token } from '../../core/accounts/types';
import type { CarrierInbound } from '../../core/carrier/types';
import { compile, parseUrl, SMS_FIELDS } from '../../core/filters/grammar-a';
import { idTime, isId } from '../../core/ids';
import { inboundMessage, inboundMessageId } from '../../core/sms/inbound';
import { toSmsEntity } from '../../core/sms/message';
import type { NumberDirectory } from '../../core/sms/ports';
import { dlrSchema, smsSchema } from '../../schemas/sms';
import { openApiDocument } from '../../gateways/http/openapi';
import { createLogger } from '../../infra/logger';
import { collect, inboundRows } from '../../pipelines/history-writer';
import { routeInbound } from '../../pipelines/lifecycle-bridge';
import { fromRow, MESSAGE_COLUMNS, toRow } from '../../stores/message-history';
import { splitWhere } from '../../stores/scoped-query';
import { makeMessage } from '../../support/message-rows';

const OURS = '+4915100000001';
const HANDSET = '+4917600000002';
const AT = '2026-11-26T10:00:00.000Z';
const token = { id: 'tok-1', orgId: 'org-1', projectId: 'proj-1', revokedAt: null } as unknown as Token;
const directory: NumberDirectory = {
  tokenByNumber: (n) => (n === OURS ? token : undefined),
  org: (id) => (id === 'org-1' ? { currency: 'EUR' } : undefined),
};
const mo = (text: string, inboundId = 'sim-abc'): CarrierInbound => ({ carrier: 'sim', from: HANDSET, to: OURS, text, at: AT, inboundId });

const ajv = new Ajv({ strict: false });
addFormats(ajv);
const validDlr = ajv.compile(dlrSchema);
const validSms = ajv.compile(smsSchema);

describe('spec 1 §2.6 + DESIGN Two-way: inbound and stop DLRs carry from (the handset) and to (our number)', () => {
  test.each([['hi there', 'inbound'], ['STOP', 'stop']])('%s → a %s DLR with from/to beside the §2.6 fields, valid against the Dlr schema', (text, status) => {
    const route = routeInbound(mo(text), directory);
    expect(route?.delivery.payload).toEqual({ id: route?.record.id, status, code: 0, eventAt: AT, message: text, from: HANDSET, to: OURS });
    expect(validDlr(route?.delivery.payload)).toBe(true);
  });

  test('the SMPP record of the same inbound names the same message, handset and number', () => {
    const route = routeInbound(mo('hi there'), directory);
    expect(route?.record).toMatchObject({ id: route?.delivery.messageId, from: HANDSET, to: OURS, orgId: 'org-1', projectId: 'proj-1', currency: 'EUR' });
  });

  test('the message id is a UUIDv7 of when it arrived, the same for the same carrier inbound (a redelivered MO names one message), another for another', () => {
    const first = routeInbound(mo('hi there'), directory)?.record.id ?? '';
    expect(isId(first)).toBe(true);
    expect(idTime(first)).toBe(Date.parse(AT));
    expect(routeInbound(mo('hi there'), directory)?.record.id).toBe(first);
    expect(routeInbound(mo('hi there', 'sim-other'), directory)?.record.id).not.toBe(first);
    for (const key of ['a', 'b', 'sim-0123', 'x'.repeat(200)]) expect(isId(inboundMessageId(key, AT))).toBe(true);
  });
});

describe('spec 1 §2.2 + DESIGN Two-way: the inbound message resource', () => {
  const record: InboundRecord = { id: inboundMessageId('sim-abc', AT), tokenId: 'tok-1', from: HANDSET, to: OURS, text: 'hi there', status: 'inbound', at: AT, orgId: 'org-1', projectId: 'proj-1', currency: 'EUR' };
  const inbound = inboundMessage({ ...record, orgId: 'org-1', projectId: 'proj-1', currency: 'EUR' });

  test('direction inbound, from the handset to our number, the text as message, never charged (prices 0), status as its DLR', () => {
    const entity = toSmsEntity(inbound);
    expect(entity).toMatchObject({
      id: record.id, direction: 'inbound', from: HANDSET, to: OURS, text: 'hi there', message: 'hi there', deliveredText: 'hi there',
      status: 'inbound', statusCode: 0, country: 'DE', charged: false, pricePerSms: 0, priceUser: 0, clientId: null, createdAt: AT,
      messagesCount: 1, encoding: 'GSM-7',
    });
    expect(validSms(entity)).toBe(true);
    expect(toSmsEntity(inboundMessage({ ...record, status: 'stop', text: 'STOP', orgId: 'org-1', projectId: 'proj-1', currency: 'EUR' }))).toMatchObject({ status: 'stop', message: 'STOP' });
  });

  test('every outbound message resource says direction outbound and has no message field', () => {
    const entity = toSmsEntity(makeMessage({}));
    expect(entity.direction).toBe('outbound');
    expect('message' in entity).toBe(false);
    expect(validSms(entity)).toBe(true);
  });

  test('row mapping: outbound rows are written with direction outbound and read back as written; inbound rows round-trip with their direction', () => {
    const outbound = makeMessage({});
    expect(toRow(outbound).direction).toBe('outbound');
    expect(fromRow(toRow(outbound))).toEqual(outbound);
    expect(toRow(inbound).direction).toBe('inbound');
    expect(fromRow(toRow(inbound))).toEqual(inbound);
    expect(MESSAGE_COLUMNS.split(', ')).toContain('direction');
  });

  test('the history writer stores an inbound record as its message row and its one transition; a record without its owner is not stored', () => {
    const msg = { subject: SUBJECTS.smsInbound('tok-1'), data: Buffer.from(JSON.stringify({ inbound: [record] })), seq: 1, headers: undefined } as unknown as JsMsg;
    const batch = collect([msg], createLogger('silent'));
    expect(batch.messages).toEqual([inbound]);
    expect(batch.transitions).toEqual([{ messageId: record.id, seq: 1, status: 'inbound', code: 0, eventAt: AT, orgId: 'org-1', projectId: 'proj-1', tokenId: 'tok-1', clientId: null }]);
    const { orgId: _o, projectId: _p, currency: _c, ...older } = record;
    expect(inboundRows(older)).toBeNull();
  });
});

describe('spec 3 Grammar A + DESIGN Two-way: GET /sms filters on direction', () => {
  test('direction_eq is a catalogue field, bound as a parameter, filtered before FINAL (a message never changes direction)', () => {
    const compiled = compile(parseUrl(new URLSearchParams('direction_eq=inbound')), SMS_FIELDS);
    expect(compiled.where).toBe('direction = {p0:String}');
    expect(compiled.params).toEqual({ p0: 'inbound' });
    expect(splitWhere('sms_messages', compiled.where).where).toBe('1');
  });

  test('the OpenAPI document lists direction among the fields of _sort and _group of GET /sms, and the Sms schema requires it', () => {
    const doc = openApiDocument() as unknown as { paths: Record<string, Record<string, { parameters: Array<{ name: string; schema: { pattern?: string; enum?: string[] } }> }>>; components: { schemas: Record<string, { required: string[]; properties: Record<string, { enum?: string[] }> }> } };
    const params = doc.paths['/sms']?.['get']?.parameters ?? [];
    expect(params.find((p) => p.name === '_group')?.schema.enum).toContain('direction');
    expect(new RegExp(params.find((p) => p.name === '_sort')?.schema.pattern ?? '^$').test('direction')).toBe(true);
    expect(doc.components.schemas['Sms']?.required).toContain('direction');
    expect(doc.components.schemas['Sms']?.properties['status']?.enum).toEqual(expect.arrayContaining(['inbound', 'stop']));
    expect(doc.components.schemas['Dlr']?.properties).toHaveProperty('from');
  });
});
