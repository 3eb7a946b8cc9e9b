// A submit_sm's way into the acceptance core: coalesced per token by the batcher and counted;
// its receipt request is accepted with the message itself. Shared by every session.
import type { Submitter } from '../../core/sms';
import type { Logger } from '../../infra/logger';
import { smsAccepted } from '../../infra/metrics';
import { SubmitBatcher, type BulkAcceptance, type SubmitOutcome } from './batcher';
import type { Binding } from './options';
import { STATUS, statusName } from './protocol';
import { wantsReceipts } from './receipts';
import type { SubmitFields } from './submit';

/** The counter's child for SMPP, resolved once (no label hashing per message). */
const acceptedOverSmpp = smsAccepted.labels({ source: 'smpp' });

export class Submissions {
  private readonly batcher: SubmitBatcher;

  constructor(acceptance: BulkAcceptance, private readonly log: Logger) {
    this.batcher = new SubmitBatcher(acceptance, { maxItems: 100, concurrency: 4 });
  }

  /** Submits one message; never rejects (an internal fault is ESME_RSYSERR). */
  accept(binding: Binding, fields: SubmitFields, text: string): Promise<SubmitOutcome> {
    return this.submit(binding, fields, text).catch((err: unknown): SubmitOutcome => {
      this.log.error({ err }, 'smpp: submit failed');
      return { ok: false, status: STATUS.ESME_RSYSERR, reason: 'internal error' };
    });
  }

  private async submit(binding: Binding, fields: SubmitFields, text: string): Promise<SubmitOutcome> {
    const submitter: Submitter = { orgId: binding.token.orgId, projectId: binding.token.projectId, tokenId: binding.token.id, source: 'smpp', currency: binding.org.currency };
    const receipt = wantsReceipts(fields.registeredDelivery)
      ? { registeredDelivery: fields.registeredDelivery, ...(fields.userMessageReference === undefined ? {} : { userMessageReference: fields.userMessageReference }) }
      : undefined;
    const outcome = await this.batcher.submit(submitter, { from: fields.from, to: fields.to, text, allowUnicode: fields.dataCoding === 8, ...(fields.validityPeriod === undefined ? {} : { validityPeriod: fields.validityPeriod }), ...(fields.scheduledAt === undefined ? {} : { scheduledAt: fields.scheduledAt }), ...(receipt ? { receipt } : {}) });
    if (!outcome.ok) {
      this.log.debug({ systemId: binding.systemId, status: statusName(outcome.status), reason: outcome.reason }, 'smpp: submit_sm refused');
      return outcome;
    }
    acceptedOverSmpp.inc();
    return outcome;
  }
}
