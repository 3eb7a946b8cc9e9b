// The SMPP gateway's building blocks: the strict PDU reader (what makes a PDU corrupt), the
// reassembly bookkeeping, the per-session token bucket, and the asynchronous password check
// that must agree with core/accounts/secrets.ts (docs/smpp.md).
import { PDU } from 'smpp';
import { hashSmppPassword, verifySmppPassword, verifySmppPasswordAsync } from '../../core/accounts/secrets';
import { TokenBucket } from '../../gateways/smpp/limits';
import { concatKey, Reassembler } from '../../gateways/smpp/protocol';
import { CorruptPduError, headerOnly, readBind, readHeader, readQuerySm, readSubmitSm, TLV, withMessageId } from '../../gateways/smpp/protocol';

describe('smpp wire reader', () => {
  it('reads binds, including clients that stop after the password', () => {
    const full = new PDU('bind_transceiver', { system_id: 'sys', password: 'pw', system_type: 'T', interface_version: 0x50 }).toBuffer();
    expect(readBind(full)).toEqual({ systemId: 'sys', password: 'pw', systemType: 'T', interfaceVersion: 0x50 });
    const short = Buffer.concat([headerOnly(0x09, 0, 1), Buffer.from('sys\u0000pw\u0000', 'latin1')]);
    expect(readBind(short)).toEqual({ systemId: 'sys', password: 'pw', systemType: '', interfaceVersion: 0x34 });
    expect(() => readBind(Buffer.concat([headerOnly(0x09, 0, 1), Buffer.from('sys', 'latin1')]))).toThrow(CorruptPduError);
  });

  it('reads every mandatory field and the TLVs of submit_sm', () => {
    const pdu = new PDU('submit_sm', { service_type: 'CMT', source_addr: 'Acme', destination_addr: '491511', esm_class: 0x40, registered_delivery: 1, data_coding: 8, short_message: Buffer.from([1, 2, 3]), sar_msg_ref_num: 0x0102 } as never).toBuffer();
    const read = readSubmitSm(pdu);
    expect(read).toMatchObject({ serviceType: 'CMT', sourceAddr: 'Acme', destinationAddr: '491511', esmClass: 0x40, registeredDelivery: 1, dataCoding: 8, shortMessage: Buffer.from([1, 2, 3]) });
    expect(read.tlvs.get(TLV.sar_msg_ref_num)).toEqual(Buffer.from([1, 2]));
  });

  it('calls a submit_sm corrupt when a field, the short_message or a TLV runs past the end', () => {
    const pdu = new PDU('submit_sm', { source_addr: 'Acme', destination_addr: '491511', data_coding: 0, short_message: Buffer.from('hello') }).toBuffer();
    for (let cut = 17; cut < pdu.length; cut += 3) expect(() => readSubmitSm(pdu.subarray(0, cut))).toThrow(CorruptPduError);
    expect(() => readSubmitSm(Buffer.concat([pdu, Buffer.from([0x04, 0x24])]))).toThrow(/TLV header/);
    expect(() => readSubmitSm(Buffer.concat([pdu, Buffer.from([0x04, 0x24, 0x00, 0x09, 0x41])]))).toThrow(/9 octets announced/);
  });

  it('reads query_sm with or without the source address', () => {
    expect(readQuerySm(new PDU('query_sm', { message_id: 'abc', source_addr: 'Acme' }).toBuffer())).toEqual({ messageId: 'abc', sourceAddr: 'Acme' });
    expect(readQuerySm(Buffer.concat([headerOnly(3, 0, 1), Buffer.from('abc\u0000')]))).toEqual({ messageId: 'abc', sourceAddr: '' });
  });

  it('writes submit_sm_resp as the package would', () => {
    const ours = withMessageId(0x80000004, 7, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b');
    expect(ours).toEqual(new PDU('submit_sm_resp', { sequence_number: 7, message_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' }).toBuffer());
  });

  it('writes header-only PDUs', () => {
    expect(readHeader(headerOnly(0x80000004, 0x45, 9))).toEqual({ length: 16, commandId: 0x80000004, status: 0x45, sequence: 9 });
  });
});

describe('smpp reassembly', () => {
  const part = (seq: number, total = 3, waiter = `w${seq}`) => ({ concat: { ref: 1, total, seq }, body: Buffer.from(String(seq)), meta: seq, waiter });

  it('completes once every sequence number is there, answering repeated parts too', () => {
    const r = new Reassembler<number, string>(10_000, () => undefined);
    expect(r.add('k', part(3))).toBeUndefined();
    expect(r.add('k', part(1))).toBeUndefined();
    expect(r.add('k', part(1, 3, 'again'))).toBeUndefined();
    expect(r.heldParts).toBe(3);
    const done = r.add('k', part(2));
    expect(done?.parts.map((p) => p.seq)).toEqual([1, 2, 3]);
    expect(done?.waiters).toEqual(['w3', 'w1', 'again', 'w2']);
    expect(r.incompleteMessages).toBe(0);
  });

  it('gives up an incomplete message after the timeout and hands back its waiters', () => {
    jest.useFakeTimers();
    try {
      const expired: Array<{ waiters: readonly string[]; received: number; total: number }> = [];
      const r = new Reassembler<number, string>(50, (waiters, received, total) => expired.push({ waiters, received, total }));
      r.add('k', part(1));
      r.add('k', part(2));
      // Kept until the timeout, not a millisecond less.
      jest.advanceTimersByTime(49);
      expect(expired).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(expired).toEqual([{ waiters: ['w1', 'w2'], received: 2, total: 3 }]);
      expect(r.add('k', part(3))).toBeUndefined();
      expect(r.clear()).toEqual(['w3']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('forgets the waiters of a closed session', () => {
    const r = new Reassembler<number, string>(10_000, () => undefined);
    r.add('k', part(1, 2, 'closed'));
    r.forget((w) => w === 'closed');
    expect(r.add('k', part(2, 2, 'open'))?.waiters).toEqual(['open']);
  });

  it('keys parts by system_id, addresses, reference and part count', () => {
    const c = { ref: 5, total: 2, seq: 1 };
    expect(concatKey('s', 'Acme', '+49151', c)).toBe(concatKey('s', 'Acme', '49151', { ...c, seq: 2 }));
    expect(concatKey('s', 'Acme', '49151', c)).not.toBe(concatKey('t', 'Acme', '49151', c));
    expect(concatKey('s', 'Acme', '49151', c)).not.toBe(concatKey('s', 'Acme', '49151', { ...c, total: 3 }));
  });
});

describe('smpp throughput limit', () => {
  it('allows a burst, then the rate', () => {
    let now = 0;
    const bucket = new TokenBucket(10, 3, () => now);
    expect([1, 2, 3, 4].map(() => bucket.take())).toEqual([true, true, true, false]);
    now += 100;
    expect([bucket.take(), bucket.take()]).toEqual([true, false]);
    now += 10_000;
    expect([1, 2, 3, 4].map(() => bucket.take())).toEqual([true, true, true, false]);
  });
});

describe('smpp bind passwords', () => {
  it('agrees with verifySmppPassword', async () => {
    const stored = hashSmppPassword('s3cret99');
    for (const attempt of ['s3cret99', 's3cret98', '', 'S3CRET99']) expect(await verifySmppPasswordAsync(attempt, stored)).toBe(verifySmppPassword(attempt, stored));
    expect(await verifySmppPasswordAsync('x', 'plain$text')).toBe(false);
  });
});
