// The bus contract (core/bus): names stay what deployed roles expect, and every payload a
// publisher writes decodes, while junk is refused with one typed error.
import { CONSUMERS, decode, decodeCarrierEvents, INGEST_STATE_KEYS, KV_KEYS, QUERIES, SIGNALS, STREAMS, SUBJECTS, UnreadableBusMessageError, WORKFLOW_IDS, WORKFLOW_TYPES } from '../../core/bus';
import type { SmsMessage } from '../../core/sms/message';

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));

const message: SmsMessage = {
  id: '01900000-0000-7000-8000-000000000001', orgId: 'o', projectId: 'p', tokenId: 't', source: 'smpp', clientId: null, status: 'queued', statusCode: null,
  from: 'Acme', country: 'DE', to: '+4915112345678', normalizedTo: '+4915112345678', charsCount: 2, text: 'hi', deliveredText: 'hi', messagesCount: 1,
  encoding: 'GSM-7', unicode: false, allowUnicode: false, charged: true, pricePerSmsMicros: 75_000, priceUserMicros: 75_000, currency: 'EUR',
  createdAt: '2026-01-01T00:00:00.000Z', chargedAt: '2026-01-01T00:00:00.000Z', scheduledAt: null, sentAt: null, deliveredAt: null, updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('bus contract: names', () => {
  test('subjects, streams, consumers, buckets and keys keep their deployed strings', () => {
    expect(SUBJECTS.smsAccepted).toBe('sms.accepted');
    expect(SUBJECTS.smsStatus('t1')).toBe('sms.status.t1');
    expect(SUBJECTS.smsInbound('t1')).toBe('sms.inbound.t1');
    expect(SUBJECTS.ingestContacts('p', 'd')).toBe('ingest.contacts.p.d');
    expect(SUBJECTS.automationTrigger('p')).toBe('automation.trigger.p');
    expect(STREAMS.sms.name).toBe('SMS');
    expect(CONSUMERS.smppDlr('t1')).toBe('smpp-dlr-t1');
    expect(KV_KEYS.messageState('x')).toBe('sms.x');
    expect(KV_KEYS.optOut('p', '+49151')).toBe('p.49151');
    expect(INGEST_STATE_KEYS.applied).toBe('applied');
  });

  test('workflow types, signals, queries and ids', () => {
    expect(WORKFLOW_TYPES.smsLifecycle).toBe('smsLifecycle');
    expect(SIGNALS.carrierEvent).toBe('carrierEvent');
    expect(QUERIES.status).toBe('status');
    expect(WORKFLOW_IDS.lifecycle('x')).toBe('sms-x');
    expect(WORKFLOW_IDS.inbound('x')).toBe('inbound-x');
  });
});

describe('bus contract: payloads decode with their schema', () => {
  test('an accepted batch and a status record decode as written', () => {
    expect(decode('accepted', bytes({ messages: [message] })).messages[0]).toEqual(message);
    const transition = { messageId: message.id, seq: 1, status: 'sent', code: 0, eventAt: message.createdAt, orgId: 'o', projectId: 'p', tokenId: 't', clientId: null };
    expect(decode('status', bytes({ messages: [message], transitions: [transition] })).transitions).toEqual([transition]);
  });

  test('carrier events of each kind decode; an unknown kind does not', () => {
    const base = { messageId: 'm', segment: 0, segments: 1, carrier: 'sim', at: message.createdAt };
    expect(decode('carrierEvent', bytes({ kind: 'submitted', ...base, carrierMessageId: 'c1' })).kind).toBe('submitted');
    expect(decode('carrierEvent', bytes({ kind: 'receipt', ...base, carrierMessageId: 'c1', state: 'DELIVRD', err: 0 })).kind).toBe('receipt');
    expect(() => decode('carrierEvent', bytes({ kind: 'teleported', ...base }))).toThrow(UnreadableBusMessageError);
  });

  test('carrier.events: a batch of events reads in order; a bare event (earlier releases) reads as a batch of one; an empty batch or a bad event in one does not', () => {
    const base = { messageId: 'm', segment: 0, segments: 1, carrier: 'sim', at: message.createdAt };
    const submitted = { kind: 'submitted', ...base, carrierMessageId: 'c1' };
    const receipt = { kind: 'receipt', ...base, carrierMessageId: 'c1', state: 'DELIVRD', err: 0 };
    expect(decodeCarrierEvents(bytes({ events: [submitted, receipt] }))).toEqual([submitted, receipt]);
    expect(decodeCarrierEvents(bytes(receipt))).toEqual([receipt]);
    expect(() => decodeCarrierEvents(bytes({ events: [] }))).toThrow(UnreadableBusMessageError);
    expect(() => decodeCarrierEvents(bytes({ events: [submitted, { ...receipt, state: 'LOST' }] }))).toThrow(UnreadableBusMessageError);
    expect(() => decodeCarrierEvents(new TextEncoder().encode('{"events":'))).toThrow(UnreadableBusMessageError);
  });

  test('junk is one typed error: not JSON, wrong types, missing fields', () => {
    expect(() => decode('accepted', new TextEncoder().encode('{not json'))).toThrow(UnreadableBusMessageError);
    expect(() => decode('accepted', bytes({ messages: [{ ...message, priceUserMicros: 'a lot' }] }))).toThrow(/priceUserMicros/);
    expect(() => decode('carrierInbound', bytes({ carrier: 'sim', from: '+1' }))).toThrow(UnreadableBusMessageError);
  });
});
