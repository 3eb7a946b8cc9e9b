import { carrierIdKey, inboundId, normalizeAddress, pickRoute, submitPdus } from '../../gateways/carrier';
import { deliveredBody, isReceipt } from '../../gateways/smpp/protocol';
import type { CarrierRoute } from '../../config';
import { toGsm7Bytes, toUcs2Bytes } from '../../core/sms/encoding';

const route = (name: string, prefixes: string[]): CarrierRoute => ({ name, host: '127.0.0.1', port: 1, systemId: 's', password: 'p', prefixes, window: 10 });

describe('docs/carrier.md connector: routing', () => {
  const routes = [route('any', ['']), route('uk', ['44']), route('uk-mobile', ['447', '4478']), route('fr', ['33'])];

  test('the longest matching prefix wins, on digits only', () => {
    expect(pickRoute(routes, '+447700900123')?.name).toBe('uk-mobile');
    expect(pickRoute(routes, '+442071234567')?.name).toBe('uk');
    expect(pickRoute(routes, '+33612345678')?.name).toBe('fr');
    expect(pickRoute(routes, '+15551234567')?.name).toBe('any');
  });

  test('no matching prefix: no route', () => {
    expect(pickRoute([route('uk', ['44'])], '+15551234567')).toBeUndefined();
    expect(pickRoute([], '+15551234567')).toBeUndefined();
  });
});

describe('spec 1 §4 SMPP: submit_sm fields', () => {
  const base = { messageId: '019a8b7c-0000-7000-8000-000000000001', from: 'Acme', to: '+447700900123' };

  test('one GSM-7 segment: unpacked septets, data_coding 0, no UDH, alphanumeric sender', () => {
    const [pdu, ...rest] = submitPdus({ ...base, text: 'Hello {world}', encoding: 'GSM-7' });
    expect(rest).toHaveLength(0);
    expect(pdu).toEqual({
      source_addr_ton: 5, source_addr_npi: 0, source_addr: 'Acme',
      dest_addr_ton: 1, dest_addr_npi: 1, destination_addr: '447700900123',
      esm_class: 0, registered_delivery: 1, data_coding: 0, short_message: toGsm7Bytes('Hello {world}'),
    });
  });

  test('two GSM-7 segments: esm_class 0x40 and the same reference in both UDHs', () => {
    const text = 'x'.repeat(153) + 'y'.repeat(10);
    const pdus = submitPdus({ ...base, from: '+447700900000', text, encoding: 'GSM-7' });
    expect(pdus).toHaveLength(2);
    const bodies = pdus.map((p) => p.short_message as Buffer);
    expect(pdus.every((p) => p.esm_class === 0x40 && p.source_addr_ton === 1 && p.source_addr_npi === 1 && p.source_addr === '447700900000')).toBe(true);
    expect([...bodies[0]!.subarray(0, 6)]).toEqual([5, 0, 3, bodies[0]![3], 2, 1]);
    expect([...bodies[1]!.subarray(0, 6)]).toEqual([5, 0, 3, bodies[0]![3], 2, 2]);
    expect(bodies[0]!.subarray(6)).toEqual(toGsm7Bytes('x'.repeat(153)));
    expect(bodies[1]!.subarray(6)).toEqual(toGsm7Bytes('y'.repeat(10)));
  });

  test('UCS-2: UTF-16BE bytes, data_coding 8', () => {
    const [pdu] = submitPdus({ ...base, text: 'Привет 😀', encoding: 'UCS-2' });
    expect(pdu?.data_coding).toBe(8);
    expect(pdu?.short_message).toEqual(toUcs2Bytes('Привет 😀'));
  });
});

describe('docs/carrier.md connector: deliver_sm', () => {
  test('receipts are told apart by esm_class or the receipted_message_id TLV', () => {
    expect(isReceipt({ esm_class: 0x04 })).toBe(true);
    expect(isReceipt({ esm_class: 0x20 })).toBe(true);
    expect(isReceipt({ esm_class: 0 , receipted_message_id: 'abc' })).toBe(true);
    expect(isReceipt({ esm_class: 0 })).toBe(false);
    expect(isReceipt({ esm_class: 0x40 })).toBe(false);
  });

  test('text by data_coding: library-decoded strings, raw bytes, Latin-9', () => {
    expect(deliveredBody({ data_coding: 0, short_message: { message: 'STOP' } }).text).toBe('STOP');
    expect(deliveredBody({ data_coding: 8, short_message: { message: toUcs2Bytes('Да') } }).text).toBe('Да');
    expect(deliveredBody({ data_coding: 0, short_message: { message: toGsm7Bytes('a€b') } }).text).toBe('a€b');
    // The library decodes data_coding 3 as Latin-1; byte 0xA4 is € in Latin-9.
    expect(deliveredBody({ data_coding: 3, short_message: { message: '\u00a4' } }).text).toBe('€');
    expect(deliveredBody({ data_coding: 0, short_message: { message: '' }, message_payload: { message: 'long text' } }).text).toBe('long text');
  });

  test('a UDH is given back with its length byte', () => {
    const body = deliveredBody({ data_coding: 0, short_message: { udh: [Buffer.from([0x00, 0x03, 0x07, 0x02, 0x01])], message: 'part' } });
    expect(body).toEqual({ text: 'part', udh: Buffer.from([0x05, 0x00, 0x03, 0x07, 0x02, 0x01]) });
  });

  test('addresses and inbound ids', () => {
    expect(normalizeAddress('447700900123', 1)).toBe('+447700900123');
    expect(normalizeAddress('Acme', 5)).toBe('Acme');
    expect(normalizeAddress('12345', 5)).toBe('12345');
    const at = new Date('2026-11-22T01:02:03Z');
    const id = inboundId('sim', '+447700900123', '+447700900000', 'STOP', at);
    expect(id).toMatch(/^sim-[0-9a-f]{32}$/);
    expect(inboundId('sim', '+447700900123', '+447700900000', 'STOP', new Date('2026-11-22T01:02:59Z'))).toBe(id);
    expect(inboundId('sim', '+447700900123', '+447700900000', 'STOP ', at)).not.toBe(id);
  });

  test('carrierIds keys are valid KV keys whatever the SMSC id looks like', () => {
    expect(carrierIdKey('sim', 'a1b2c3')).toBe('sim.a1b2c3');
    expect(carrierIdKey('sim', 'A_b-9')).toBe('sim.A_b-9');
    expect(carrierIdKey('sim', 'A_b-9.')).toBe('sim.A_b-9=2E');
    expect(carrierIdKey('sim', '12.34/x y')).toBe('sim.12=2E34=2Fx=20y');
    expect(carrierIdKey('sim', '')).toBe('sim.=00');
    expect(carrierIdKey('sim', 'é')).toMatch(/^sim\.(=[0-9A-F]{2})+$/);
  });
});
