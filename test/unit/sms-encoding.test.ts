import fc from 'fast-check';
import {
  encodeText,
  fromGsm7Bytes,
  fromLatin9Bytes,
  fromUcs2Bytes,
  gsm7Septets,
  isGsm7,
  splitSegments,
  toGsm7Bytes,
  toUcs2Bytes,
  transliterateToGsm7,
} from '../../core/sms/encoding';

const EMOJI = '\u{1F600}';
const ALL_GSM7 =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà' +
  '^{}\\[~]|€\f';

const lengths = (segments: string[]): number[] => segments.map((s) => s.length);
const hasLoneSurrogate = (s: string): boolean => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

describe('DESIGN §4 encoding: GSM-7 segments', () => {
  test('160 septets fit in one segment', () => {
    expect(encodeText('a'.repeat(160), false)).toEqual({
      deliveredText: 'a'.repeat(160),
      encoding: 'GSM-7',
      unicode: false,
      charsCount: 160,
      messagesCount: 1,
    });
    expect(splitSegments('a'.repeat(160), 'GSM-7')).toEqual(['a'.repeat(160)]);
  });

  test('161 septets take two segments of at most 153', () => {
    const result = encodeText('a'.repeat(161), false);
    expect(result.charsCount).toBe(161);
    expect(result.messagesCount).toBe(2);
    expect(lengths(splitSegments('a'.repeat(161), 'GSM-7'))).toEqual([153, 8]);
  });

  test('306 septets take 2 segments, 307 take 3', () => {
    expect(encodeText('a'.repeat(306), false).messagesCount).toBe(2);
    expect(lengths(splitSegments('a'.repeat(306), 'GSM-7'))).toEqual([153, 153]);
    expect(encodeText('a'.repeat(307), false).messagesCount).toBe(3);
    expect(lengths(splitSegments('a'.repeat(307), 'GSM-7'))).toEqual([153, 153, 1]);
  });

  test('segments join back to the original text', () => {
    const text = 'The quick brown fox {jumps} over the lazy dog €5. '.repeat(9);
    expect(splitSegments(text, 'GSM-7').join('')).toBe(text);
  });

  test('splitting a non-GSM-7 text as GSM-7 is refused', () => {
    expect(() => splitSegments('ol\u00e1', 'GSM-7')).toThrow(RangeError);
  });
});

describe('DESIGN §4 encoding: GSM-7 extension characters count two septets', () => {
  test('every extension character counts 2, basic characters count 1', () => {
    expect(gsm7Septets('^{}\\[~]|€\f')).toBe(20);
    expect(gsm7Septets('@£$¥èé\n')).toBe(7);
    expect(gsm7Septets('')).toBe(0);
  });

  test('80 euro signs are 160 septets in one segment, 81 take two', () => {
    const eighty = encodeText('€'.repeat(80), false);
    expect(eighty.charsCount).toBe(160);
    expect(eighty.messagesCount).toBe(1);
    const eightyOne = encodeText('€'.repeat(81), false);
    expect(eightyOne.charsCount).toBe(162);
    expect(eightyOne.messagesCount).toBe(2);
    expect(lengths(splitSegments('€'.repeat(81), 'GSM-7'))).toEqual([76, 5]);
  });

  test('an extension character straddling the 153 boundary moves whole to the next segment', () => {
    const text = 'a'.repeat(152) + '€' + 'b'.repeat(10);
    expect(splitSegments(text, 'GSM-7')).toEqual(['a'.repeat(152), '€' + 'b'.repeat(10)]);
  });

  test('messagesCount counts the extra segment a moved escape pair causes', () => {
    const text = 'a'.repeat(152) + '€' + 'a'.repeat(152);
    const result = encodeText(text, false);
    expect(result.charsCount).toBe(306);
    expect(splitSegments(text, 'GSM-7')).toEqual(['a'.repeat(152), '€' + 'a'.repeat(151), 'a']);
    expect(result.messagesCount).toBe(3);
  });

  test('gsm7Septets refuses a character outside GSM-7', () => {
    expect(() => gsm7Septets('ok \u00e1')).toThrow(RangeError);
    expect(() => gsm7Septets(EMOJI)).toThrow('U+1F600');
  });
});

describe('DESIGN §4 encoding: UCS-2 segments', () => {
  test('70 code units fit in one segment, 71 take two', () => {
    expect(encodeText('Ж'.repeat(70), true)).toEqual({
      deliveredText: 'Ж'.repeat(70),
      encoding: 'UCS-2',
      unicode: true,
      charsCount: 70,
      messagesCount: 1,
    });
    const result = encodeText('Ж'.repeat(71), true);
    expect(result.charsCount).toBe(71);
    expect(result.messagesCount).toBe(2);
    expect(lengths(splitSegments('Ж'.repeat(71), 'UCS-2'))).toEqual([67, 4]);
  });

  test('134 code units take 2 segments, 135 take 3', () => {
    expect(encodeText('Ж'.repeat(134), true).messagesCount).toBe(2);
    expect(lengths(splitSegments('Ж'.repeat(134), 'UCS-2'))).toEqual([67, 67]);
    expect(encodeText('Ж'.repeat(135), true).messagesCount).toBe(3);
    expect(lengths(splitSegments('Ж'.repeat(135), 'UCS-2'))).toEqual([67, 67, 1]);
  });

  test('an emoji counts two code units: 35 emoji fit in one segment, 36 take two', () => {
    const thirtyFive = encodeText(EMOJI.repeat(35), true);
    expect(thirtyFive.charsCount).toBe(70);
    expect(thirtyFive.messagesCount).toBe(1);
    const thirtySix = encodeText(EMOJI.repeat(36), true);
    expect(thirtySix.charsCount).toBe(72);
    expect(thirtySix.messagesCount).toBe(2);
    expect(splitSegments(EMOJI.repeat(36), 'UCS-2')).toEqual([EMOJI.repeat(33), EMOJI.repeat(3)]);
  });

  test('a surrogate pair straddling the 67 boundary moves whole to the next segment', () => {
    const text = 'Ж'.repeat(66) + EMOJI + 'Ж'.repeat(10);
    const segments = splitSegments(text, 'UCS-2');
    expect(segments).toEqual(['Ж'.repeat(66), EMOJI + 'Ж'.repeat(10)]);
    expect(segments.some(hasLoneSurrogate)).toBe(false);
  });

  test('messagesCount counts the extra segment a moved surrogate pair causes', () => {
    const text = 'Ж'.repeat(66) + EMOJI.repeat(34);
    const result = encodeText(text, true);
    expect(result.charsCount).toBe(134);
    expect(splitSegments(text, 'UCS-2')).toEqual(['Ж'.repeat(66), EMOJI.repeat(33), EMOJI]);
    expect(result.messagesCount).toBe(3);
  });
});

describe('DESIGN §4 encoding: transliteration to GSM-7 when Unicode is not allowed', () => {
  test('smart quotes become straight quotes', () => {
    expect(transliterateToGsm7('\u201cHi\u201d \u2018there\u2019')).toBe('"Hi" \'there\'');
  });

  test('dashes, ellipsis and non-breaking space become their ASCII forms', () => {
    expect(transliterateToGsm7('a\u2014b\u2013c\u2026d\u00a0e')).toBe('a-b-c...d e');
  });

  test('accented letters of the GSM-7 table stay; others lose their accent', () => {
    expect(transliterateToGsm7('caf\u00e9')).toBe('caf\u00e9');
    expect(transliterateToGsm7('\u00e1 \u00e7 \u00c1 \u00ea \u0161')).toBe('a c A e s');
    const kept = 'éèùìòÇØøÅåÄÖÑÜ§äöñüàÉÆæßΔΦΓΛΩΠΨΣΘΞ';
    expect(isGsm7(kept)).toBe(true);
    expect(transliterateToGsm7(kept)).toBe(kept);
  });

  test('a decomposed accented letter of the GSM-7 table is kept composed', () => {
    expect(transliterateToGsm7('e\u0301')).toBe('\u00e9');
  });

  test('characters that cannot be represented become one ? each', () => {
    expect(transliterateToGsm7('\u4f60\u597d')).toBe('??');
    expect(transliterateToGsm7(`ok ${EMOJI}`)).toBe('ok ?');
  });

  test('encodeText delivers and counts the transliterated text', () => {
    expect(encodeText('Ol\u00e1 \u2014 \u00e7a va\u2026', false)).toEqual({
      deliveredText: 'Ola - ca va...',
      encoding: 'GSM-7',
      unicode: false,
      charsCount: 14,
      messagesCount: 1,
    });
    const ellipses = encodeText('\u2026'.repeat(54), false);
    expect(ellipses.deliveredText).toBe('.'.repeat(162));
    expect(ellipses.charsCount).toBe(162);
    expect(ellipses.messagesCount).toBe(2);
  });
});

describe('DESIGN §4 encoding: allowUnicode decides only for text outside GSM-7', () => {
  test('an emoji with allowUnicode=true goes UCS-2 with the text unchanged', () => {
    expect(encodeText(`Hi ${EMOJI}`, true)).toEqual({
      deliveredText: `Hi ${EMOJI}`,
      encoding: 'UCS-2',
      unicode: true,
      charsCount: 5,
      messagesCount: 1,
    });
  });

  test('pure GSM-7 text with allowUnicode=true stays GSM-7', () => {
    expect(encodeText('Price {5€}', true)).toEqual({
      deliveredText: 'Price {5€}',
      encoding: 'GSM-7',
      unicode: false,
      charsCount: 13,
      messagesCount: 1,
    });
  });

  test('an accented letter outside GSM-7 goes UCS-2 when allowed, is transliterated when not', () => {
    expect(encodeText('Ol\u00e1', true).encoding).toBe('UCS-2');
    expect(encodeText('Ol\u00e1', true).deliveredText).toBe('Ol\u00e1');
    expect(encodeText('Ol\u00e1', false).encoding).toBe('GSM-7');
    expect(encodeText('Ol\u00e1', false).deliveredText).toBe('Ola');
  });

  test('isGsm7 accepts the whole alphabet and rejects anything else', () => {
    expect(isGsm7(ALL_GSM7)).toBe(true);
    expect(isGsm7('')).toBe(true);
    expect(isGsm7('\x1b')).toBe(false);
    expect(isGsm7('\t')).toBe(false);
    expect(isGsm7('\u00e1')).toBe(false);
    expect(isGsm7(EMOJI)).toBe(false);
  });
});

describe('DESIGN §4 encoding: SMPP wire formats', () => {
  test('GSM-7 is one septet per byte with ESC before extension characters', () => {
    expect([...toGsm7Bytes('@A€Æ\n')]).toEqual([0x00, 0x41, 0x1b, 0x65, 0x1c, 0x0a]);
    expect([...toGsm7Bytes('{}[]\\^~|\f')]).toEqual([
      0x1b, 0x28, 0x1b, 0x29, 0x1b, 0x3c, 0x1b, 0x3e, 0x1b, 0x2f, 0x1b, 0x14, 0x1b, 0x3d, 0x1b, 0x40, 0x1b, 0x0a,
    ]);
  });

  test('GSM-7 bytes round-trip the whole alphabet', () => {
    const bytes = toGsm7Bytes(ALL_GSM7);
    expect(bytes.length).toBe(gsm7Septets(ALL_GSM7));
    expect(fromGsm7Bytes(bytes)).toBe(ALL_GSM7);
  });

  test('toGsm7Bytes refuses a character outside GSM-7', () => {
    expect(() => toGsm7Bytes('ol\u00e1')).toThrow(RangeError);
  });

  test('fromGsm7Bytes decodes unknown escapes as GSM 03.38 receivers do', () => {
    expect(fromGsm7Bytes(Buffer.from([0x1b, 0x41, 0x1b, 0x1b, 0x42, 0x1b]))).toBe('A B');
    expect(fromGsm7Bytes(Buffer.from([0x41, 0x80]))).toBe('A?');
  });

  test('UCS-2 is UTF-16BE, surrogate pairs included, and round-trips', () => {
    const text = `AЖ${EMOJI}`;
    expect([...toUcs2Bytes(text)]).toEqual([0x00, 0x41, 0x04, 0x16, 0xd8, 0x3d, 0xde, 0x00]);
    expect(fromUcs2Bytes(toUcs2Bytes(text))).toBe(text);
    expect(fromUcs2Bytes(Buffer.from([0x00, 0xe9, 0x20, 0xac]))).toBe('é€');
  });

  test('fromUcs2Bytes does not modify its input and refuses an odd length', () => {
    const input = Buffer.from([0x00, 0x41]);
    fromUcs2Bytes(input);
    expect([...input]).toEqual([0x00, 0x41]);
    expect(() => fromUcs2Bytes(Buffer.from([0x00, 0x41, 0x00]))).toThrow(RangeError);
  });

  test('Latin-9 decodes 0xA4 as the euro sign and its other seven differences from Latin-1', () => {
    expect(fromLatin9Bytes(Buffer.from([0xa4]))).toBe('€');
    expect(fromLatin9Bytes(Buffer.from([0x41, 0xe9, 0xa6, 0xa8, 0xb4, 0xb8, 0xbc, 0xbd, 0xbe, 0xa3]))).toBe('AéŠšŽžŒœŸ£');
  });

  test('Latin-9 decodes a mixed French text with euro sign and oe ligature', () => {
    const text = 'Caf\u00e9 \u00e0 5\u20ac \u0152uvre';
    const latin9 = Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0xe0, 0x20, 0x35, 0xa4, 0x20, 0xbc, 0x75, 0x76, 0x72, 0x65]);
    expect(fromLatin9Bytes(latin9)).toBe(text);
  });
});

describe('encodeText: the GSM-7 basic-table fast path counts as the general path does', () => {
  const BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
  const EXTENSION = '\f^{}\\[~]|€';
  const general = (text: string): object => ({
    deliveredText: text, encoding: 'GSM-7', unicode: false, charsCount: gsm7Septets(text), messagesCount: splitSegments(text, 'GSM-7').length,
  });

  it('for texts of basic characters of every length around the segment limits', () => {
    const text = fc.array(fc.constantFrom(...BASIC), { maxLength: 700 }).map((chars) => chars.join(''));
    fc.assert(fc.property(text, fc.boolean(), (t, allowUnicode) => { expect(encodeText(t, allowUnicode)).toEqual(general(t)); }), { numRuns: 500 });
    for (const n of [0, 1, 159, 160, 161, 305, 306, 307, 459, 460]) expect(encodeText('a'.repeat(n), false)).toEqual(general('a'.repeat(n)));
  });

  it('leaves extension characters, escapes and other text to the general path', () => {
    const mixed = fc.array(fc.constantFrom(...BASIC, ...EXTENSION, '\x1b'), { minLength: 1, maxLength: 400 }).map((chars) => chars.join(''));
    fc.assert(fc.property(mixed, (t) => {
      if (!isGsm7(t)) return;
      expect(encodeText(t, false)).toEqual(general(t));
    }), { numRuns: 300 });
    expect(encodeText('€'.repeat(80), false)).toMatchObject({ charsCount: 160, messagesCount: 1 });
    expect(encodeText('-]^', false)).toMatchObject({ charsCount: 5, messagesCount: 1 });
    expect(encodeText('a😀', true)).toMatchObject({ encoding: 'UCS-2', unicode: true });
  });
});
