// The SMS create item rules beyond types (issue 14 items 7 and 10; spec 1 §2.1, §7; DESIGN §4):
// no silent '?' for characters GSM-7 cannot carry, no blank sender ids, and every wrongly
// typed field reported.
import { describeChar, encodeText, transliterateToGsm7, untransliterable } from '../../core/sms/encoding';
import { checkSmsItem } from '../../core/sms/validate';

const item = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({ from: 'TestCo', to: '+4915112345678', text: 'Hello', ...overrides });

describe('DESIGN §4 / issue 14 item 7: texts GSM-7 cannot carry faithfully', () => {
  test.each([
    ['an emoji', 'Hi 😀', ['😀']],
    ['NUL', 'a\u0000b', ['\u0000']],
    ['a tab', 'a\tb', ['\t']],
    ['Cyrillic', 'Привет', ['П', 'р', 'и', 'в', 'е', 'т']],
    ['CJK', '你好', ['你', '好']],
    ['lower-case Greek (only capitals are GSM-7)', 'αβ', ['α', 'β']],
    ['a repeated character, listed once', '😀😀', ['😀']],
  ])('untransliterable: %s', (_name, text, expected) => {
    expect(untransliterable(text)).toEqual(expected);
  });

  test.each([
    ['plain GSM-7', 'Hello @ £ € [x]'],
    ['documented transliterations: smart quotes, dashes, ellipsis, no-break space', '“Olá” – it’s… a\u00a0b'],
    ['accents stripped to a GSM-7 letter', 'café Ñandú ŠKODA naïve'],
    ['a decomposed accent (NFD input)', 'e\u0301'],
    ['capital Greek letters of the GSM-7 table', 'ΔΦΓΛΩΠΨΣΘΞ'],
  ])('nothing refused: %s', (_name, text) => {
    expect(untransliterable(text)).toEqual([]);
    expect(transliterateToGsm7(text)).not.toContain('?');
  });

  test('with allowUnicode false, an emoji → 422 on text naming the character (code point and glyph)', () => {
    const checked = checkSmsItem(item({ text: 'Hi 😀 and \u0000' }));
    expect(checked).toEqual({ ok: false, fields: { text: [expect.stringContaining('U+1F600 "😀"')] } });
    const message = (checked as { fields: Record<string, string[]> }).fields['text']?.[0] ?? '';
    expect(message).toContain('U+0000');
    expect(message).toContain('allowUnicode');
  });

  test('with allowUnicode false and omitted alike; with allowUnicode true the same text is accepted (UCS-2)', () => {
    expect(checkSmsItem(item({ text: '😀', allowUnicode: false })).ok).toBe(false);
    expect(checkSmsItem(item({ text: '😀' })).ok).toBe(false);
    expect(checkSmsItem(item({ text: '😀', allowUnicode: true })).ok).toBe(true);
    expect(encodeText('😀', true).encoding).toBe('UCS-2');
  });

  test('a long list of characters is capped at 10 with a count of the rest', () => {
    const text = 'абвгдежзийклмн';
    const checked = checkSmsItem(item({ text })) as { fields: Record<string, string[]> };
    expect(checked.fields['text']?.[0]).toMatch(/and 4 more/);
  });

  test('Latin-9 letters GSM-7 lacks (SMPP data_coding 3) are transliterated: Œ → OE, þ → th, © → (c), soft hyphen dropped', () => {
    expect(untransliterable('Œuvre þorn © a\u00adb')).toEqual([]);
    expect(encodeText('Œuvre þorn © a\u00adb', false).deliveredText).toBe('OEuvre thorn (c) ab');
    expect(untransliterable('25°C ±1')).toEqual(['°', '±']);
  });

  test('documented transliterations are still applied, not refused', () => {
    expect(checkSmsItem(item({ text: '“Olá” – café…' })).ok).toBe(true);
    expect(encodeText('“Olá” – café…', false).deliveredText).toBe('"Ola" - café...');
  });

  test('describeChar: printable characters with their glyph, control characters by code point only', () => {
    expect(describeChar('😀')).toBe('U+1F600 "😀"');
    expect(describeChar('\u0000')).toBe('U+0000');
    expect(describeChar('\u200b')).toBe('U+200B');
  });
});

describe('spec 1 §2.1 / issue 14 item 7: sender ids are refused, not trimmed, when blank or padded', () => {
  test.each([['   '], ['           '], [' AB'], ['AB '], [' Shop '], ['\tAB'], ['AB\n']])('from %j → 422 on from', (from) => {
    expect(checkSmsItem(item({ from }))).toEqual({ ok: false, fields: { from: [expect.stringContaining('space')] } });
  });

  test.each([['ABC'], ['My Shop'], ['A B'], ['ABCDEFGHIJK'], ['12345678901234'], ['+4915112345']])('from %j is accepted', (from) => {
    expect(checkSmsItem(item({ from })).ok).toBe(true);
  });
});

describe('issue 14 item 10: every wrongly typed field is reported', () => {
  test('three wrong types → the shape problem names all three (the bulk item reports each field)', () => {
    const checked = checkSmsItem(item({ from: 1, to: 4915112345678, allowUnicode: 'yes' }));
    expect(checked).toEqual({
      ok: false,
      shape: { field: 'from', message: 'must be a string', fields: { from: ['must be a string'], to: ['must be a string'], allowUnicode: ['must be a boolean'] } },
    });
  });
});

describe('unknown field names from the client are data, never object internals (found by the OpenAPI fuzz: a 500)', () => {
  test.each([['__proto__'], ['constructor'], ['toString'], ['hasOwnProperty']])('an unknown field named %s → 422 "is not a known field" on that name', (name) => {
    const checked = checkSmsItem(JSON.parse(`{"from":"TestCo","to":"+4915112345678","text":"x","${name}":[1]}`));
    expect(checked.ok).toBe(false);
    const fields = (checked as { fields: Record<string, string[]> }).fields;
    expect(Object.keys(fields)).toEqual([name]);
    expect(Object.getOwnPropertyDescriptor(fields, name)?.value).toEqual(['is not a known field']);
    expect(JSON.parse(JSON.stringify(fields))).toEqual(JSON.parse(`{"${name}":["is not a known field"]}`));
  });
});
