// The carrier simulator's script (DESIGN §6): the last two digits of a destination number
// choose what the simulated SMSC does with a submit_sm, so tests and demos are repeatable.
// docs/carrier.md prints this table; the simulator role, its tests and the docs all read it
// from here.
import { SMPP_STATUS } from '../errors';
import type { ReceiptState } from './types';

/** SMPP command_status the simulator answers a refused submit_sm with. */
export const ESME_RSUBMITFAIL = SMPP_STATUS.ESME_RSUBMITFAIL;

export interface ReceiptStep {
  readonly state: ReceiptState;
  /** The receipt's `err:` field. */
  readonly err: number;
}

export interface SimulatorOutcome {
  /** What the docs call this path. */
  readonly name: string;
  /** command_status of the submit_sm_resp; 0 = accepted with a message_id. */
  readonly submitStatus: number;
  /** Receipts sent in order, each after the simulator's latency; empty = never reports. */
  readonly receipts: readonly ReceiptStep[];
}

export const DEFAULT_OUTCOME: SimulatorOutcome = {
  name: 'delivered',
  submitStatus: 0,
  receipts: [{ state: 'ENROUTE', err: 0 }, { state: 'DELIVRD', err: 0 }],
};

/** Keyed by the destination's last two digits; any other ending gets DEFAULT_OUTCOME. */
export const SIMULATOR_OUTCOMES: Readonly<Record<string, SimulatorOutcome>> = {
  '89': { name: 'buffered, then undeliverable (network error)', submitStatus: 0, receipts: [{ state: 'ENROUTE', err: 0 }, { state: 'UNDELIV', err: 8 }] },
  '90': { name: 'undeliverable: absent temporarily', submitStatus: 0, receipts: [{ state: 'UNDELIV', err: 2 }] },
  '91': { name: 'undeliverable: absent permanently', submitStatus: 0, receipts: [{ state: 'UNDELIV', err: 3 }] },
  '92': { name: 'rejected: antispam', submitStatus: 0, receipts: [{ state: 'REJECTD', err: 6 }] },
  '93': { name: 'expired', submitStatus: 0, receipts: [{ state: 'EXPIRED', err: 1 }] },
  '94': { name: 'silence: never reports', submitStatus: 0, receipts: [] },
  '95': { name: 'submit refused (ESME_RSUBMITFAIL)', submitStatus: ESME_RSUBMITFAIL, receipts: [] },
  '96': { name: 'accepted, then delivered', submitStatus: 0, receipts: [{ state: 'ACCEPTD', err: 0 }, { state: 'DELIVRD', err: 0 }] },
  '97': { name: 'unknown', submitStatus: 0, receipts: [{ state: 'UNKNOWN', err: 99 }] },
  '98': { name: 'deleted (canceled)', submitStatus: 0, receipts: [{ state: 'DELETED', err: 0 }] },
};

/** The outcome for a destination address (with or without '+'; only its digits count). */
export function outcomeFor(destination: string): SimulatorOutcome {
  const digits = destination.replace(/\D/g, '');
  return SIMULATOR_OUTCOMES[digits.slice(-2)] ?? DEFAULT_OUTCOME;
}
