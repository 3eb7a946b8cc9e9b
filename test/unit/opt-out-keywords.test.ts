// Two-way keywords (DESIGN §4 "Two-way", spec 1 §6; core/sms/opt-out.ts): the first word of an
// inbound message, case- and whitespace-insensitive, decides stop / start / help.
import { firstWord, HELP_KEYWORDS, keywordAction, START_KEYWORDS, STOP_KEYWORDS } from '../../core/sms/opt-out';

describe('DESIGN §4 Two-way: keywordAction', () => {
  test('every STOP-family word opts out, in any case, with blanks around it', () => {
    for (const word of ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']) {
      expect(STOP_KEYWORDS).toContain(word);
      for (const text of [word, word.toLowerCase(), `  ${word[0]}${word.slice(1).toLowerCase()}\n`, `\t${word}\t`]) expect(keywordAction(text)).toBe('stop');
    }
  });

  test('START, YES and UNSTOP opt back in; HELP and INFO ask for help', () => {
    expect(START_KEYWORDS).toEqual(['START', 'YES', 'UNSTOP']);
    expect(HELP_KEYWORDS).toEqual(['HELP', 'INFO']);
    expect(['start', ' Yes ', 'UNSTOP'].map(keywordAction)).toEqual(['start', 'start', 'start']);
    expect(['help', ' Info\r\n'].map(keywordAction)).toEqual(['help', 'help']);
  });

  test('the first word decides: trailing text is allowed, a keyword later in the text is not a keyword', () => {
    expect(keywordAction('stop sending me these')).toBe('stop');
    expect(keywordAction('Yes again please')).toBe('start');
    expect(keywordAction('yes, again')).toBeNull(); // the first word is "yes," (punctuation is part of it)
    expect(keywordAction('please stop')).toBeNull();
    expect(keywordAction('STOPPING')).toBeNull();
    expect(keywordAction('hello')).toBeNull();
    expect(keywordAction('')).toBeNull();
    expect(keywordAction('   \n ')).toBeNull();
  });

  test('firstWord', () => {
    expect(firstWord('  unsubscribe me ')).toBe('UNSUBSCRIBE');
    expect(firstWord('')).toBe('');
    expect(keywordAction('End')).toBe('stop');
    expect(keywordAction('start')).toBe('start');
  });
});
