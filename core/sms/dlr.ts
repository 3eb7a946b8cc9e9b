// A message's status transitions and the DLRs made of them: the types the lifecycle workflow,
// its activities, the SMPP gateway and the history stores share (spec 1 §2.6).
export type { DeadDlr, DlrAttempt, DlrDelivery, DlrPayload, Transition } from '../bus/records';
/** A transition with its webhook attempts, as GET /sms/{id}/dlrs returns it. */
export interface DlrHistoryEntry {
  readonly seq: number;
  readonly status: string;
  readonly code: number;
  readonly eventAt: string;
  readonly attempts: Array<{ attempt: number; outcome: string; responseStatus: number | null; latencyMs: number; error: string | null; at: string }>;
}
