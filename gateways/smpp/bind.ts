// Who may bind (spec 1 §4 SMPP transport, docs/smpp.md): the system_id and password of an
// api_sms token whose organization has SMPP enabled, within the per-system_id session limit and
// outside a failed-bind lockout (./bind-throttle.ts); and whether a bound session is still
// entitled to its bind (revocation, re-issued password).
import { verifySmppPasswordAsync } from '../../core/accounts';
import { smppBindFailures, smppBindLockouts } from '../../infra/metrics';
import type { Logger } from '../../infra/logger';
import type { BindSubject, BindThrottle, ThrottleScope } from './bind-throttle';
import type { Binding, BindMode, SmppOptions } from './options';
import type { ReceiptFeed, SmppDirectory } from './ports';
import { STATUS, type BindRequest } from './protocol';

export type BindDecision =
  | { readonly ok: true; readonly binding: Binding }
  | { readonly ok: false; readonly status: number; readonly reason: string; readonly cause?: unknown };

export interface BindChecks {
  readonly directory: SmppDirectory;
  readonly receipts: ReceiptFeed;
  readonly options: Pick<SmppOptions, 'maxSessionsPerSystemId' | 'bindRefusalDelayMs' | 'bindLockoutMs' | 'bindFailureWindowMs'>;
  /** Failed binds per system_id and peer address, and their lockouts. */
  readonly throttle: BindThrottle;
  readonly log: Logger;
  /** Sessions of this system_id bound in this process now. */
  boundCount(systemId: string): number;
}

const refused = (status: number, reason: string): BindDecision => ({ ok: false, status, reason });

/** The interface_version we answer with: 0x50 for v5.0, 0x34 for v3.4, the client's for older. */
export function negotiatedVersion(requested: number): number {
  return requested >= 0x50 ? 0x50 : requested >= 0x34 ? 0x34 : requested;
}

/**
 * Decides a bind. A lockout refuses it first, before the system_id is looked up or the password
 * hashed; a failure that starts a lockout and every refusal by one are answered after
 * bindRefusalDelayMs. The session limit is checked before the receipt feed is prepared, and the
 * caller checks it again after: parallel binds race for the last slot.
 */
export async function decideBind(checks: BindChecks, request: BindRequest, mode: BindMode, address: string): Promise<BindDecision> {
  const { directory, options, throttle } = checks;
  const subject: BindSubject = { systemId: request.systemId, address };
  const locked = throttle.lockedOut(subject);
  if (locked) return lockedOut(checks, locked.scope, locked.remainingMs);
  const token = directory.tokenBySystemId(request.systemId);
  if (!token || token.revokedAt || token.kind !== 'api_sms' || !token.smpp || token.smpp.systemId !== request.systemId) {
    return refusedCredentials(checks, recordFailure(checks, subject, false), STATUS.ESME_RINVSYSID, 'unknown system_id');
  }
  const admission = await throttle.admit(subject);
  if (admission.kind === 'locked') return lockedOut(checks, admission.scope, admission.remainingMs);
  const passwordHash = token.smpp.passwordHash;
  let lockouts: readonly ThrottleScope[] | undefined;
  try {
    // The outcome is recorded before the slots are released, so binds waiting for them see it.
    if (await verifySmppPasswordAsync(request.password, passwordHash)) throttle.succeeded(subject);
    else lockouts = recordFailure(checks, subject, true);
  } finally {
    admission.release();
  }
  if (lockouts) return refusedCredentials(checks, lockouts, STATUS.ESME_RINVPASWD, 'wrong password');
  const org = directory.org(token.orgId);
  if (!org?.smppEnabled) return refused(STATUS.ESME_RBINDFAIL, 'SMPP is not enabled on the organization');
  if (checks.boundCount(request.systemId) >= options.maxSessionsPerSystemId) return refused(STATUS.ESME_RBINDFAIL, sessionLimit(options));
  try {
    await checks.receipts.ensure(token.id);
  } catch (err) {
    return { ok: false, status: STATUS.ESME_RSYSERR, reason: 'receipt feed unavailable', cause: err };
  }
  const binding: Binding = { mode, systemId: request.systemId, token, org, passwordHash, version: negotiatedVersion(request.interfaceVersion) };
  return { ok: true, binding };
}

/** A bind refused by a lockout: nothing of it was checked; answered ESME_RBINDFAIL after the refusal delay. */
async function lockedOut(checks: BindChecks, scope: ThrottleScope, remainingMs: number): Promise<BindDecision> {
  smppBindFailures.inc({ reason: 'locked_out' });
  await checks.throttle.clock.delay(checks.options.bindRefusalDelayMs);
  return refused(STATUS.ESME_RBINDFAIL, `too many failed binds for this ${scope === 'system_id' ? 'system_id' : 'address'}: locked out for ${Math.ceil(remainingMs / 1000)} s more`);
}

/** Wrong credentials: counted (metrics, throttle); returns the lockouts this failure started (logged). */
function recordFailure(checks: BindChecks, subject: BindSubject, knownSystemId: boolean): readonly ThrottleScope[] {
  smppBindFailures.inc({ reason: knownSystemId ? 'wrong_password' : 'unknown_system_id' });
  const started = checks.throttle.failed(subject, knownSystemId);
  for (const scope of started) {
    smppBindLockouts.inc({ scope });
    checks.log.warn(
      { scope, ...(scope === 'system_id' ? { systemId: subject.systemId } : { address: subject.address }), windowSeconds: checks.options.bindFailureWindowMs / 1000, lockoutSeconds: checks.options.bindLockoutMs / 1000 },
      'smpp: too many failed binds; binds locked out',
    );
  }
  return started;
}

/** The refusal of wrong credentials; when they started a lockout, answered after the refusal delay. */
async function refusedCredentials(checks: BindChecks, lockouts: readonly ThrottleScope[], status: number, reason: string): Promise<BindDecision> {
  if (lockouts.length > 0) await checks.throttle.clock.delay(checks.options.bindRefusalDelayMs);
  return refused(status, reason);
}

export function sessionLimit(options: Pick<SmppOptions, 'maxSessionsPerSystemId'>): string {
  return `already ${options.maxSessionsPerSystemId} sessions for this system_id`;
}

/** Why a bound session may no longer use its bind, or undefined while it may. */
export function bindingProblem(directory: SmppDirectory, b: Binding): string | undefined {
  const token = directory.token(b.token.id);
  if (!token || token.revokedAt) return 'token revoked';
  if (!token.smpp || token.smpp.systemId !== b.systemId) return 'SMPP credentials revoked';
  if (token.smpp.passwordHash !== b.passwordHash) return 'SMPP password re-issued';
  const org = directory.org(token.orgId);
  if (!org?.smppEnabled) return 'SMPP disabled on the organization';
  return undefined;
}
