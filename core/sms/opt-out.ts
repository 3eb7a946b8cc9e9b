// Opt-out by keyword (spec 1 §6): an inbound message whose whole text is one of these words,
// in any case and with surrounding blanks, opts its sender out of the project's messages.

export const STOP_KEYWORDS: readonly string[] = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'ARRET', 'STOPP'];

export function isStopKeyword(text: string): boolean {
  return STOP_KEYWORDS.includes(text.trim().toUpperCase());
}
