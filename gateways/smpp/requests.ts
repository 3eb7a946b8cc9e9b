// The requests a bound session makes of the server: submit_sm (a whole message through the
// acceptance core, or a part held until its message is complete; spec 1 §4, §8), query_sm and
// cancel_sm (a scheduled message, DESIGN §4 Scheduling).
// The session's bookkeeping (window, held parts, throughput) lives on the CustomerSession.
import { isAppError } from '../../core/errors';
import { smppPdus } from '../../infra/metrics';
import type { SubmitOutcome } from './batcher';
import { bindingProblem } from './bind';
import { assembleText, COMMAND, concatKey, readCancelSm, readQuerySm, readSubmitSm, responseTo, STATUS, statusName, type Frame } from './protocol';
import { queryAnswer } from './receipts';
import type { CustomerSession } from './session';
import { interpretSubmit } from './submit';

export function submitSm(session: CustomerSession, frame: Frame): void {
  const { ctx } = session;
  const { sequence } = frame.header;
  const refuse = (status: number): void => session.respondError(COMMAND.submit_sm, sequence, status);
  const binding = session.binding;
  if (!binding || !session.canSubmit) return refuse(STATUS.ESME_RINVBNDSTS);
  const submit = readSubmitSm(frame.pdu);
  if (session.inFlight >= ctx.options.window) return refuse(STATUS.ESME_RTHROTTLED);
  if (!session.bucket.take()) return refuse(STATUS.ESME_RTHROTTLED);
  if (bindingProblem(ctx.directory, binding)) {
    session.unbindAndClose('credentials no longer valid');
    return refuse(STATUS.ESME_RINVBNDSTS);
  }
  const interpreted = interpretSubmit(submit);
  if (interpreted.kind === 'refused') {
    ctx.log.debug({ systemId: binding.systemId, status: statusName(interpreted.status), reason: interpreted.reason }, 'smpp: submit_sm refused');
    return refuse(interpreted.status);
  }
  if (interpreted.kind === 'whole') {
    session.inFlight++;
    void ctx.submissions.accept(binding, interpreted.fields, interpreted.text).then((outcome) => session.answerSubmit(sequence, outcome, false));
    return undefined;
  }
  if (session.held >= ctx.options.maxHeldParts) return refuse(STATUS.ESME_RMSGQFUL);
  // Held parts leave the window: a client may send a message of more parts than its window.
  session.held++;
  const { fields, concat, body } = interpreted;
  const complete = ctx.reassembler.add(concatKey(binding.systemId, fields.from, fields.to, concat), { concat, body, meta: { fields, dataCoding: fields.dataCoding }, waiter: { session, sequence } });
  if (!complete) return undefined;
  const answerAll = (outcome: SubmitOutcome): void => {
    for (const w of complete.waiters) w.session.answerSubmit(w.sequence, outcome, true);
  };
  let text: string;
  try {
    text = assembleText(complete.parts.map((p) => ({ seq: p.seq, body: p.body, dataCoding: p.meta.dataCoding })));
  } catch {
    return answerAll({ ok: false, status: STATUS.ESME_RINVMSGLEN, reason: 'a UCS-2 body must have an even number of octets' });
  }
  void ctx.submissions.accept(binding, complete.parts[0]?.meta.fields ?? fields, text).then(answerAll);
  return undefined;
}

export async function querySm(session: CustomerSession, frame: Frame): Promise<void> {
  const { ctx } = session;
  const { sequence } = frame.header;
  const binding = session.binding;
  if (!binding || !session.canSubmit) return session.respondError(COMMAND.query_sm, sequence, STATUS.ESME_RINVBNDSTS);
  const query = readQuerySm(frame.pdu);
  if (session.inFlight >= ctx.options.window) return session.respondError(COMMAND.query_sm, sequence, STATUS.ESME_RTHROTTLED);
  session.inFlight++;
  try {
    const message = await ctx.states.get(query.messageId).catch(() => null);
    if (!message || message.orgId !== binding.token.orgId || message.projectId !== (binding.token.projectId ?? '')) {
      return session.respondError(COMMAND.query_sm, sequence, STATUS.ESME_RQUERYFAIL);
    }
    const answer = queryAnswer(message);
    smppPdus.inc({ command: 'query_sm', status: 'ESME_ROK' });
    session.conn.send('query_sm_resp', { sequence_number: sequence, message_id: message.id, final_date: answer.finalDate ?? '', message_state: answer.messageState, error_code: answer.errorCode });
    return undefined;
  } finally {
    session.inFlight--;
  }
}

/**
 * cancel_sm of one scheduled message by its message_id (the id of its submit_sm_resp), through
 * the same core function as HTTP. ESME_RCANCELFAIL when the message is unknown, another
 * token's project's, already left or canceled, or when no message_id is given (canceling
 * every message of a source/destination pair is not offered).
 */
export async function cancelSm(session: CustomerSession, frame: Frame): Promise<void> {
  const { ctx } = session;
  const { sequence } = frame.header;
  const binding = session.binding;
  if (!binding || !session.canSubmit) return session.respondError(COMMAND.cancel_sm, sequence, STATUS.ESME_RINVBNDSTS);
  const request = readCancelSm(frame.pdu);
  if (!ctx.scheduled || request.messageId === '') return session.respondError(COMMAND.cancel_sm, sequence, STATUS.ESME_RCANCELFAIL);
  if (session.inFlight >= ctx.options.window) return session.respondError(COMMAND.cancel_sm, sequence, STATUS.ESME_RTHROTTLED);
  session.inFlight++;
  try {
    await ctx.scheduled.cancel({ orgId: binding.token.orgId, projectId: binding.token.projectId }, request.messageId);
  } catch (err) {
    if (!isAppError(err) || err.code === 'INTERNAL') throw err;
    ctx.log.debug({ systemId: binding.systemId, messageId: request.messageId, reason: err.message }, 'smpp: cancel_sm refused');
    return session.respondError(COMMAND.cancel_sm, sequence, err.code === 'ENGINE_UNAVAILABLE' ? STATUS.ESME_RSYSERR : STATUS.ESME_RCANCELFAIL);
  } finally {
    session.inFlight--;
  }
  smppPdus.inc({ command: 'cancel_sm', status: 'ESME_ROK' });
  session.conn.sendHeader(responseTo(COMMAND.cancel_sm), STATUS.ESME_ROK, sequence);
  return undefined;
}
