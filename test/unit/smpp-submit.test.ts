// submit_sm → SMS create item (gateways/smpp/submit.ts) and the error table of docs/smpp.md:
// spec 1 §4 SMPP part (fields, data_coding, concatenation), §7 statuses mapped to SMPP, §8.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDU, type PduOptions } from 'smpp';
import { AppError, ERRORS, validationError, type ErrorCode } from '../../core/errors';
import { toGsm7Bytes, toUcs2Bytes } from '../../core/sms/encoding';
import { interpretSubmit, statusForError, statusForFields } from '../../gateways/smpp/submit';
import { assembleText, decodeBody, readSubmitSm, STATUS, statusName } from '../../gateways/smpp/protocol';

const submit = (options: PduOptions) => readSubmitSm(new PDU('submit_sm', { source_addr: 'Acme', destination_addr: '4915112345678', data_coding: 0, short_message: toGsm7Bytes('hello'), ...options }).toBuffer());

describe('smpp submit_sm rules (spec 1 §4, §8)', () => {
  it('reads a plain GSM-7 submit into from, to, text and the receipt request', () => {
    expect(interpretSubmit(submit({ registered_delivery: 1, user_message_reference: 9 } as PduOptions))).toEqual({
      kind: 'whole', text: 'hello', fields: { from: 'Acme', to: '4915112345678', dataCoding: 0, registeredDelivery: 1, userMessageReference: 9 },
    });
  });

  it('accepts source_addr of 3 to 11 characters only', () => {
    expect(interpretSubmit(submit({ source_addr: 'abc' })).kind).toBe('whole');
    expect(interpretSubmit(submit({ source_addr: '12345678901' })).kind).toBe('whole');
    expect(interpretSubmit(submit({ source_addr: 'ab' }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVSRCADR });
    expect(interpretSubmit(submit({ source_addr: '123456789012' }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVSRCADR });
  });

  it('accepts destination_addr in E.164 with or without +', () => {
    expect(interpretSubmit(submit({ destination_addr: '+4915112345678' })).kind).toBe('whole');
    for (const bad of ['', '0049151', '+', '4915112345678901', '49 151 123']) {
      expect(interpretSubmit(submit({ destination_addr: bad }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVDSTADR });
    }
  });

  it('accepts esm_class 0, the messaging modes and 0x40 only', () => {
    for (const ok of [0x00, 0x01, 0x02, 0x03]) expect(interpretSubmit(submit({ esm_class: ok })).kind).toBe('whole');
    for (const bad of [0x04, 0x08, 0x10, 0x20, 0x80, 0xc0]) expect(interpretSubmit(submit({ esm_class: bad }))).toMatchObject({ status: STATUS.ESME_RINVESMCLASS });
  });

  it('decodes data_coding 0, 1, 3 and 8 and refuses the others', () => {
    expect(decodeBody(toGsm7Bytes('a€[b]'), 0)).toBe('a€[b]');
    expect(decodeBody(Buffer.from('IA5 {ok} ~`', 'latin1'), 1)).toBe('IA5 {ok} ~`');
    expect(decodeBody(Buffer.from([0xa4, 0xbc, 0xbd, 0xbe]), 3)).toBe('€ŒœŸ');
    expect(decodeBody(toUcs2Bytes('日本😀'), 8)).toBe('日本😀');
    for (const dcs of [2, 4, 5, 6, 7, 9, 0x10, 0xf0]) expect(interpretSubmit(submit({ data_coding: dcs }))).toMatchObject({ status: STATUS.ESME_RINVDCS });
  });

  it('§4: accepts data_coding 1 (IA5/ASCII) in short_message, message_payload and concatenated parts', () => {
    expect(interpretSubmit(submit({ data_coding: 1, short_message: Buffer.from('Hello [ASCII] $5 @home', 'latin1') }))).toMatchObject({ kind: 'whole', text: 'Hello [ASCII] $5 @home', fields: { dataCoding: 1 } });
    const long = 'plain ascii '.repeat(30);
    expect(interpretSubmit(submit({ data_coding: 1, short_message: Buffer.alloc(0), message_payload: Buffer.from(long, 'latin1') }))).toMatchObject({ kind: 'whole', text: long });
    // A 16-bit reference of 0xabcd: octets above 0x7F in the UDH are not text, so they are no fault.
    const udh16 = Buffer.from([0x06, 0x08, 0x04, 0xab, 0xcd, 0x02, 0x01]);
    expect(interpretSubmit(submit({ data_coding: 1, esm_class: 0x40, short_message: Buffer.concat([udh16, Buffer.from('part one', 'latin1')]) }))).toMatchObject({ kind: 'part', concat: { ref: 0xabcd, total: 2, seq: 1 } });
    expect(assembleText([{ seq: 2, body: Buffer.from(' two', 'latin1'), dataCoding: 1 }, { seq: 1, body: Buffer.from('one', 'latin1'), dataCoding: 1 }])).toBe('one two');
  });

  it('§4: refuses data_coding 1 carrying an octet above 0x7F with ESME_RINVDCS, naming the octet', () => {
    const latin1 = Buffer.from('caf\u00e9', 'latin1');
    expect(interpretSubmit(submit({ data_coding: 1, short_message: latin1 }))).toEqual({ kind: 'refused', status: STATUS.ESME_RINVDCS, reason: 'data_coding 1 (IA5/ASCII) is 7-bit, but octet 3 of the text is 0xe9' });
    expect(interpretSubmit(submit({ data_coding: 1, short_message: Buffer.alloc(0), message_payload: latin1 }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVDCS });
    const udh8 = Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, 0x01]);
    expect(interpretSubmit(submit({ data_coding: 1, esm_class: 0x40, short_message: Buffer.concat([udh8, latin1]) }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVDCS });
    expect(interpretSubmit(submit({ data_coding: 1, short_message: Buffer.from([0x80]) }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVDCS });
    expect(interpretSubmit(submit({ data_coding: 1, short_message: Buffer.from([0x7f]) }))).toMatchObject({ kind: 'whole' });
    expect(() => decodeBody(latin1, 1)).toThrow(RangeError);
  });

  it('reads the body from message_payload when short_message is empty', () => {
    const text = 'x'.repeat(500);
    expect(interpretSubmit(submit({ short_message: Buffer.alloc(0), message_payload: toGsm7Bytes(text) }))).toMatchObject({ kind: 'whole', text });
  });

  it('recognises UDH concatenation (8- and 16-bit references) and SAR TLVs', () => {
    const udh8 = Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x03, 0x02]);
    expect(interpretSubmit(submit({ esm_class: 0x40, short_message: Buffer.concat([udh8, toGsm7Bytes('mid')]) }))).toMatchObject({ kind: 'part', concat: { ref: 0x2a, total: 3, seq: 2 }, body: toGsm7Bytes('mid') });
    const udh16 = Buffer.from([0x06, 0x08, 0x04, 0x12, 0x34, 0x02, 0x01]);
    expect(interpretSubmit(submit({ esm_class: 0x40, short_message: Buffer.concat([udh16, toGsm7Bytes('first')]) }))).toMatchObject({ kind: 'part', concat: { ref: 0x1234, total: 2, seq: 1 } });
    expect(interpretSubmit(submit({ sar_msg_ref_num: 7, sar_total_segments: 2, sar_segment_seqnum: 2 } as PduOptions))).toMatchObject({ kind: 'part', concat: { ref: 7, total: 2, seq: 2 } });
  });

  it('treats a UDH without concatenation (or of one part) as a whole message without its header', () => {
    const ports = Buffer.from([0x06, 0x05, 0x04, 0x0b, 0x84, 0x23, 0xf0]);
    expect(interpretSubmit(submit({ esm_class: 0x40, short_message: Buffer.concat([ports, toGsm7Bytes('port')]) }))).toMatchObject({ kind: 'whole', text: 'port' });
    const single = Buffer.from([0x05, 0x00, 0x03, 0x01, 0x01, 0x01]);
    expect(interpretSubmit(submit({ esm_class: 0x40, short_message: Buffer.concat([single, toGsm7Bytes('one')]) }))).toMatchObject({ kind: 'whole', text: 'one' });
  });

  // Issue 14 item 8: impossible concatenation values are refused, never read as a whole message.
  it('refuses concatenation with impossible values (UDH or SAR) with ESME_RINVMSGLEN', () => {
    for (const udh of [[0x05, 0x00, 0x03, 1, 2, 3], [0x05, 0x00, 0x03, 1, 2, 0], [0x05, 0x00, 0x03, 1, 0, 0], [0x06, 0x08, 0x04, 0, 1, 2, 3], [0x04, 0x00, 0x02, 1, 2]]) {
      expect(interpretSubmit(submit({ esm_class: 0x40, short_message: Buffer.concat([Buffer.from(udh), toGsm7Bytes('x')]) }))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVMSGLEN });
    }
    for (const [total, seq] of [[2, 3], [2, 0], [0, 0], [0, 1]]) {
      expect(interpretSubmit(submit({ sar_msg_ref_num: 7, sar_total_segments: total, sar_segment_seqnum: seq } as PduOptions))).toMatchObject({ kind: 'refused', status: STATUS.ESME_RINVMSGLEN });
    }
  });

  it('refuses a UDH longer than the body', () => {
    expect(interpretSubmit(submit({ esm_class: 0x40, short_message: Buffer.from([0x09, 0x00, 0x03]) }))).toMatchObject({ status: STATUS.ESME_RINVMSGLEN });
  });

  it('joins parts in sequence order before decoding, so split escapes and surrogates survive', () => {
    const gsm = toGsm7Bytes('ab€cd');
    expect(assembleText([{ seq: 2, body: gsm.subarray(3), dataCoding: 0 }, { seq: 1, body: gsm.subarray(0, 3), dataCoding: 0 }])).toBe('ab€cd');
    const ucs = toUcs2Bytes('x😀y');
    expect(assembleText([{ seq: 1, body: ucs.subarray(0, 4), dataCoding: 8 }, { seq: 2, body: ucs.subarray(4), dataCoding: 8 }])).toBe('x😀y');
    expect(assembleText([{ seq: 1, body: toGsm7Bytes('gsm '), dataCoding: 0 }, { seq: 2, body: toUcs2Bytes('ucs'), dataCoding: 8 }])).toBe('gsm ucs');
  });
});

describe('smpp error table (docs/smpp.md, spec 1 §7)', () => {
  it('maps 422s by field: to, from, text, anything else', () => {
    expect(statusForFields({ to: ['x'], text: ['y'] })).toBe(STATUS.ESME_RINVDSTADR);
    expect(statusForFields({ from: ['x'] })).toBe(STATUS.ESME_RINVSRCADR);
    expect(statusForFields({ text: ['x'] })).toBe(STATUS.ESME_RINVMSGLEN);
    expect(statusForFields({ clientId: ['x'] })).toBe(STATUS.ESME_RSUBMITFAIL);
    expect(statusForError(validationError({ to: ['opted out'] }))).toBe(STATUS.ESME_RINVDSTADR);
  });

  it('maps every registry code through its smpp column, 402 to ESME_RX_P_APPN and 429 to ESME_RTHROTTLED', () => {
    for (const code of Object.keys(ERRORS) as ErrorCode[]) expect(statusForError(new AppError(code, 'x'))).toBe(ERRORS[code].smpp);
    expect(statusForError(new AppError('INSUFFICIENT_FUNDS', 'x'))).toBe(0x65);
    expect(statusForError(new AppError('RATE_LIMITED', 'x'))).toBe(STATUS.ESME_RTHROTTLED);
    expect(statusForError(new Error('boom'))).toBe(STATUS.ESME_RSYSERR);
  });

  it('documents every command status the gateway sends in docs/smpp.md', () => {
    const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'smpp.md'), 'utf8');
    for (const [name, value] of Object.entries(STATUS)) {
      expect(doc).toContain(name);
      expect(doc.toLowerCase()).toContain(`0x${value.toString(16).padStart(2, '0')}`);
      expect(statusName(value)).toBe(name);
    }
  });
});
