import { concatRef, concatUdh, ESM_UDHI, parseConcatUdh, withConcatUdh } from '../../gateways/smpp/protocol';

describe('spec 1 §4 SMPP concatenation: UDH', () => {
  test('a 3-segment message: 05 00 03 ref 03 seq before each body', () => {
    const bodies = [Buffer.from('aaa'), Buffer.from('bbb'), Buffer.from('c')];
    const out = withConcatUdh(bodies, 0x5a);
    expect(out.map((b) => b.toString('hex'))).toEqual([
      '0500035a0301' + Buffer.from('aaa').toString('hex'),
      '0500035a0302' + Buffer.from('bbb').toString('hex'),
      '0500035a0303' + Buffer.from('c').toString('hex'),
    ]);
    expect(ESM_UDHI).toBe(0x40);
  });

  test('a single segment gets no UDH', () => {
    const body = Buffer.from('hello');
    expect(withConcatUdh([body], 1)).toEqual([body]);
  });

  test('the reference byte is stable per message id and spreads across ids', () => {
    const id = '019a8b7c-0000-7000-8000-000000000001';
    expect(concatRef(id)).toBe(concatRef(id));
    expect(concatRef(id)).toBeGreaterThanOrEqual(0);
    expect(concatRef(id)).toBeLessThanOrEqual(255);
    const refs = new Set(Array.from({ length: 200 }, (_, i) => concatRef(`019a8b7c-0000-7000-8000-${String(i).padStart(12, '0')}`)));
    expect(refs.size).toBeGreaterThan(100);
  });

  test('segment numbers outside 1..total are refused', () => {
    expect(() => concatUdh(1, 3, 0)).toThrow(RangeError);
    expect(() => concatUdh(1, 3, 4)).toThrow(RangeError);
    expect(() => concatUdh(1, 256, 1)).toThrow(RangeError);
  });

  test('parses 8-bit and 16-bit concatenation elements, skipping others', () => {
    expect(parseConcatUdh(concatUdh(7, 3, 2))).toEqual({ ref: 7, total: 3, seq: 2 });
    expect(parseConcatUdh(Buffer.from([0x06, 0x08, 0x04, 0x12, 0x34, 0x02, 0x01]))).toEqual({ ref: 0x1234, total: 2, seq: 1 });
    // A port-addressing element (0x05) first, then the concatenation element.
    expect(parseConcatUdh(Buffer.from([0x0b, 0x05, 0x04, 0x0b, 0x84, 0x23, 0xf0, 0x00, 0x03, 0x09, 0x02, 0x02]))).toEqual({ ref: 9, total: 2, seq: 2 });
    expect(parseConcatUdh(Buffer.from([0x05, 0x00, 0x03, 0x01, 0x02]))).toBeUndefined();
    expect(parseConcatUdh(Buffer.from([0x05, 0x00, 0x03, 0x01, 0x02, 0x03]))).toBeUndefined();
    expect(parseConcatUdh(Buffer.from([0x04, 0x05, 0x02, 0x00, 0x00]))).toBeUndefined();
  });
});
