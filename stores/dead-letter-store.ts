// Dead-lettered DLRs (KV bucket `dead_dlrs`, written by the lifecycle activities) for the
// console: listed per token, and re-driven as the admin CLI's `dlr redrive` does it (a
// dlrDelivery workflow on a fresh retry schedule, then the dead letter removed).
import type { KV } from '@nats-io/kv';
import type { Client } from '@temporalio/client';
import { decode, KV_KEYS, WORKFLOW_IDS, WORKFLOW_TYPES } from '../core/bus';

export interface DeadLetterEntry extends ReturnType<typeof decodeDead> {
  readonly key: string;
}

function decodeDead(value: Uint8Array) {
  return decode('deadDlr', value);
}

export class DeadLetterStore {
  /** `temporal` is needed only to re-drive (listing works without a Temporal connection). */
  constructor(private readonly kv: KV, private readonly temporal: { client: Client; taskQueue: string; schedule: unknown } | null) {}

  /** Dead letters of some tokens, newest first. */
  async list(tokenIds: readonly string[]): Promise<DeadLetterEntry[]> {
    const dead: DeadLetterEntry[] = [];
    for (const tokenId of tokenIds) dead.push(...(await this.find({ tokenId })));
    return dead.sort((a, b) => b.failedAt.localeCompare(a.failedAt));
  }

  /** Dead letters of one token (or of every token), optionally of one message only. */
  async find(filter: { readonly tokenId?: string; readonly messageId?: string }): Promise<DeadLetterEntry[]> {
    const dead: DeadLetterEntry[] = [];
    for await (const key of await this.kv.keys(KV_KEYS.deadDlrsOf(filter.tokenId))) {
      const entry = await this.kv.get(key);
      if (!entry || entry.operation !== 'PUT' || entry.length === 0) continue;
      const value = { ...decodeDead(entry.value), key };
      if (!filter.messageId || value.messageId === filter.messageId) dead.push(value);
    }
    return dead;
  }

  async redrive(dead: DeadLetterEntry): Promise<void> {
    const { reason: _reason, failedAt: _failedAt, key, ...delivery } = dead;
    if (!this.temporal) throw new Error('re-driving a dead letter needs a Temporal connection');
    await this.temporal.client.workflow.start(WORKFLOW_TYPES.dlrDelivery, {
      taskQueue: this.temporal.taskQueue, workflowId: WORKFLOW_IDS.redrive(dead.messageId, dead.seq, Date.now()), args: [delivery, this.temporal.schedule],
    });
    await this.kv.delete(key);
  }
}
