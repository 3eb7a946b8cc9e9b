// Two-way keywords (spec 1 §6, DESIGN §4 "Two-way"): the first word of an inbound message, in any
// case and with any surrounding blanks, decides what it does for the project that owns the number:
// STOP-family words opt the sender out, START-family words opt it back in, HELP-family words ask
// for the token's help text. Any other message is a plain inbound.

import type { Token } from '../accounts/types';

export const STOP_KEYWORDS: readonly string[] = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'ARRET', 'STOPP'];
export const START_KEYWORDS: readonly string[] = ['START', 'YES', 'UNSTOP'];
export const HELP_KEYWORDS: readonly string[] = ['HELP', 'INFO'];

export type KeywordAction = 'stop' | 'start' | 'help';

/** The message's first word, upper-cased ('' for a blank message). */
export function firstWord(text: string): string {
  return (text.trim().split(/\s+/u)[0] ?? '').toUpperCase();
}

/** What an inbound message's first word asks for; null for an ordinary message. */
export function keywordAction(text: string): KeywordAction | null {
  const word = firstWord(text);
  if (word === '') return null;
  if (STOP_KEYWORDS.includes(word)) return 'stop';
  if (START_KEYWORDS.includes(word)) return 'start';
  if (HELP_KEYWORDS.includes(word)) return 'help';
  return null;
}

/** How a number came onto a project's opt-out list: an inbound keyword, or the API / admin CLI. */
export type OptOutSource = 'keyword' | 'api';

/** One number on a project's opt-out list (GET /transactional/v1/opt-outs). */
export interface OptOutEntry {
  /** +E.164. */
  readonly number: string;
  /** When it was opted out (ISO 8601). */
  readonly since: string;
  readonly source: OptOutSource;
  /** The keyword that opted it out, for source `keyword`. */
  readonly keyword?: string;
}

/** A project's opt-out list, read and managed (the API, the admin CLI, the lifecycle bridge). */
export interface OptOutList {
  /** Adds (or refreshes) a number; `number` is +E.164. */
  optOut(projectId: string, number: string, at: string, source?: OptOutSource, keyword?: string): Promise<void>;
  /** Removes a number; false when it was not on the list. */
  optIn(projectId: string, number: string): Promise<boolean>;
  /** The project's entries sorted by number, from `start` (0-based), at most `limit`. */
  list(projectId: string, page: { readonly start: number; readonly limit: number }): Promise<OptOutEntry[]>;
}

/** The automatic reply to a HELP-family keyword: from the number that received it, to the handset. */
export interface HelpReply {
  readonly from: string;
  readonly to: string;
  readonly text: string;
}

/** Sends a HELP reply as an ordinary outbound message of the token (pipelines/help-replies.ts). */
export interface HelpReplies {
  /** `inboundId` names the inbound it answers: sending again for the same inbound sends nothing more. */
  send(token: Token, reply: HelpReply, inboundId: string): Promise<void>;
}
