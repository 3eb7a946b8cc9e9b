// DLR history in ClickHouse: the transitions of each message (tables sms_transitions) and
// every webhook attempt (dlr_attempts), behind GET /sms/{id}/dlrs.
import type { TransitionRecord } from '../core/bus/payloads';
import type { DlrAttempt, DlrHistoryEntry, DlrHistoryReader, LifecycleOwners } from '../core/sms';
import { WORKFLOW_IDS } from '../core/bus/temporal';
import type { ClickHouse } from '../infra/clickhouse';
import { fromClickHouseTime, toClickHouseTime } from './clickhouse-time';
import { insertJsonRows, type InProcessSettings } from './insert-rows';

export type { DlrHistoryEntry } from '../core/sms';

export class DlrHistory implements DlrHistoryReader {
  /** `inProcess`: settings of the inserts on the in-process engine (stores/insert-rows.ts). */
  constructor(private readonly ch: ClickHouse, private readonly owners?: LifecycleOwners, private readonly inProcess?: InProcessSettings) {}

  async workflowOf(messageId: string): Promise<{ id: string; firstRunId: string | null }> {
    const owner = await this.owners?.find(messageId);
    return owner ? { id: owner.workflowId, firstRunId: owner.runId } : { id: WORKFLOW_IDS.lifecycle(messageId), firstRunId: null };
  }

  async insertTransitions(rows: readonly TransitionRecord[]): Promise<void> {
    await insertJsonRows(this.ch, 'sms_transitions', rows.map((t) => ({ message_id: t.messageId, org_id: t.orgId, project_id: t.projectId, token_id: t.tokenId, client_id: t.clientId, seq: t.seq, status: t.status, code: t.code, event_at: toClickHouseTime(t.eventAt) })), this.inProcess);
  }

  async insertAttempts(rows: readonly DlrAttempt[]): Promise<void> {
    await insertJsonRows(this.ch, 'dlr_attempts', rows.map((a) => ({ message_id: a.messageId, org_id: a.orgId, token_id: a.tokenId, seq: a.seq, status: a.status, attempt: a.attempt, outcome: a.outcome, response_status: a.responseStatus, latency_ms: a.latencyMs, error: a.error, url: a.url, at: toClickHouseTime(a.at) })), this.inProcess);
  }

  /**
   * Transitions of one message, oldest first, each with its webhook attempts. A primary-key
   * range read without FINAL: a row written twice (a stream message delivered again) is the
   * same row, so one per key (`LIMIT 1 BY`) is what FINAL would keep.
   */
  async forMessage(orgId: string, messageId: string): Promise<DlrHistoryEntry[]> {
    const params = { org: orgId, id: messageId };
    const [transitions, attempts] = await Promise.all([
      this.ch.client.query({ query: `SELECT seq, status, code, event_at FROM ${this.ch.table('sms_transitions')} WHERE org_id = {org:String} AND message_id = {id:String} ORDER BY seq LIMIT 1 BY seq`, query_params: params, format: 'JSONEachRow' }),
      this.ch.client.query({ query: `SELECT seq, attempt, outcome, response_status, latency_ms, error, at FROM ${this.ch.table('dlr_attempts')} WHERE org_id = {org:String} AND message_id = {id:String} ORDER BY seq, attempt LIMIT 1 BY seq, attempt`, query_params: params, format: 'JSONEachRow' }),
    ]);
    const attemptRows = await attempts.json<{ seq: number; attempt: number; outcome: string; response_status: number | null; latency_ms: number; error: string | null; at: string }>();
    return (await transitions.json<{ seq: number; status: string; code: number; event_at: string }>()).map((t) => ({
      seq: Number(t.seq),
      status: t.status,
      code: Number(t.code),
      eventAt: fromClickHouseTime(t.event_at),
      attempts: attemptRows.filter((a) => Number(a.seq) === Number(t.seq)).map((a) => ({
        attempt: Number(a.attempt), outcome: a.outcome, responseStatus: a.response_status === null ? null : Number(a.response_status), latencyMs: Number(a.latency_ms), error: a.error, at: fromClickHouseTime(a.at),
      })),
    }));
  }
}
