// Receipts and answers sent by the SMPP gateway (gateways/smpp/receipts.ts): which transitions
// become deliver_sm under each registered_delivery, the status → stat mapping, the receipt
// text, query_sm states, inbound deliver_sm (spec 1 §2.6, §6 rule 4; DESIGN §4).
import { parseReceipt } from '../../core/carrier/receipt';
import { DLR_STATUSES, type MessageStatus } from '../../core/sms/message';
import { addressOf, inboundPdu, queryAnswer, receiptPdu, receiptText, receiptWanted, STATE_OF_STATUS, wantsReceipts } from '../../gateways/smpp/receipts';

const message = { id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', from: 'Acme', to: '4915112345678', normalizedTo: '+4915112345678', text: 'Grüße — “quoted” text that goes on', createdAt: '2026-01-02T03:04:05.678Z' };

describe('smpp receipts (spec 1 §6 rule 4)', () => {
  it('registered_delivery 1 gets every transition; 2 final failures; 3 delivered; 0x10 adds the intermediate ones', () => {
    const table = (rd: number): string[] => DLR_STATUSES.filter((s) => receiptWanted(rd, s));
    expect(table(0)).toEqual([]);
    expect(table(1)).toEqual(['sent', 'accepted', 'buffered', 'delivered', 'error', 'failed', 'expired', 'canceled', 'rejected', 'unknown']);
    expect(table(2)).toEqual(['error', 'failed', 'expired', 'canceled', 'rejected', 'unknown']);
    expect(table(3)).toEqual(['delivered']);
    expect(table(0x12)).toEqual(['sent', 'accepted', 'buffered', 'error', 'failed', 'expired', 'canceled', 'rejected', 'unknown']);
    expect(table(0x10)).toEqual(['sent', 'accepted', 'buffered']);
    expect([0, 1, 2, 3, 0x10, 0x11, 0x04, 0x08].map(wantsReceipts)).toEqual([false, true, true, true, true, true, false, false]);
  });

  it('maps our statuses to the SMPP states of DESIGN §4 read backwards', () => {
    expect(STATE_OF_STATUS).toEqual({
      scheduled: 'ENROUTE', queued: 'ENROUTE', sent: 'ENROUTE', buffered: 'ENROUTE', accepted: 'ACCEPTD', delivered: 'DELIVRD', expired: 'EXPIRED',
      canceled: 'DELETED', failed: 'UNDELIV', error: 'UNDELIV', rejected: 'REJECTD', unknown: 'UNKNOWN',
    });
  });

  it('writes the standard receipt text, which our own carrier-side parser reads back', () => {
    const text = receiptText({ message, transition: { status: 'failed', code: 3, eventAt: '2026-01-02T03:09:00.000Z' } });
    expect(text).toBe(`id:${message.id} sub:001 dlvrd:000 submit date:2601020304 done date:2601020309 stat:UNDELIV err:003 text:Grüße - "quoted" tex`);
    expect(parseReceipt(text)).toMatchObject({ id: message.id, state: 'UNDELIV', err: 3, dlvrd: 0, sub: 1 });
  });

  it('builds the receipt deliver_sm: handset → sender id, esm_class 0x04, TLVs from v3.4 on', () => {
    const input = { message, transition: { status: 'delivered' as MessageStatus, code: 0, eventAt: '2026-01-02T03:09:00.000Z' }, userMessageReference: 12 };
    const pdu = receiptPdu(input, 0x34);
    expect(pdu).toMatchObject({ source_addr_ton: 1, source_addr_npi: 1, source_addr: '4915112345678', dest_addr_ton: 5, destination_addr: 'Acme', esm_class: 4, data_coding: 0, receipted_message_id: message.id, message_state: 2, user_message_reference: 12 });
    expect(receiptPdu(input, 0x33)).not.toHaveProperty('receipted_message_id');
    expect(receiptPdu({ ...input, message: { ...message, from: '+4930123456' } }, 0x50)).toMatchObject({ dest_addr_ton: 1, destination_addr: '4930123456' });
  });

  it('answers query_sm with the message_state, a final date once final, and the status code', () => {
    expect(queryAnswer({ status: 'queued', statusCode: null, updatedAt: '2026-01-01T00:00:00.000Z', deliveredAt: null })).toEqual({ messageState: 1, finalDate: undefined, errorCode: 0 });
    expect(queryAnswer({ status: 'failed', statusCode: 2, updatedAt: '2026-01-01T00:00:01.000Z', deliveredAt: null })).toEqual({ messageState: 5, finalDate: new Date('2026-01-01T00:00:01.000Z'), errorCode: 2 });
    expect(queryAnswer({ status: 'delivered', statusCode: 0, updatedAt: '2026-01-01T00:00:03.000Z', deliveredAt: '2026-01-01T00:00:02.000Z' }).finalDate).toEqual(new Date('2026-01-01T00:00:02.000Z'));
  });

  it('sends inbound messages in GSM-7 when possible, UCS-2 otherwise, long ones in message_payload', () => {
    expect(inboundPdu({ from: '+4915112345678', to: 'Acme', text: 'STOP' }, 0x34)).toMatchObject({ esm_class: 0, data_coding: 0, source_addr: '4915112345678', dest_addr_ton: 5 });
    expect(inboundPdu({ from: '+4915112345678', to: '4930123', text: 'Привет' }, 0x34)).toMatchObject({ data_coding: 8 });
    const long = inboundPdu({ from: '+4915112345678', to: '4930123', text: 'y'.repeat(300) }, 0x34);
    expect((long.short_message as Buffer).length).toBe(0);
    expect((long.message_payload as Buffer).length).toBe(300);
  });

  it('addresses digits as international numbers and the rest as alphanumeric', () => {
    expect(addressOf('+4915112345678')).toEqual({ ton: 1, npi: 1, addr: '4915112345678' });
    expect(addressOf('Acme 2')).toEqual({ ton: 5, npi: 0, addr: 'Acme 2' });
  });
});
