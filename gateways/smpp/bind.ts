// Who may bind (spec 1 §4 SMPP transport, docs/smpp.md): the system_id and password of an
// api_sms token whose organization has SMPP enabled, within the per-system_id session limit;
// and whether a bound session is still entitled to its bind (revocation, re-issued password).
import { verifySmppPasswordAsync } from '../../core/accounts/secrets';
import type { Binding, BindMode, SmppOptions } from './options';
import type { ReceiptFeed, SmppDirectory } from './ports';
import { STATUS, type BindRequest } from './protocol';

export type BindDecision =
  | { readonly ok: true; readonly binding: Binding }
  | { readonly ok: false; readonly status: number; readonly reason: string; readonly cause?: unknown };

export interface BindChecks {
  readonly directory: SmppDirectory;
  readonly receipts: ReceiptFeed;
  readonly options: Pick<SmppOptions, 'maxSessionsPerSystemId'>;
  /** Sessions of this system_id bound in this process now. */
  boundCount(systemId: string): number;
}

const refused = (status: number, reason: string): BindDecision => ({ ok: false, status, reason });

/** The interface_version we answer with: 0x50 for v5.0, 0x34 for v3.4, the client's for older. */
export function negotiatedVersion(requested: number): number {
  return requested >= 0x50 ? 0x50 : requested >= 0x34 ? 0x34 : requested;
}

/**
 * Decides a bind. The session limit is checked before the slow steps (password hash, receipt
 * feed) and the caller checks it again after them: parallel binds race for the last slot.
 */
export async function decideBind(checks: BindChecks, request: BindRequest, mode: BindMode): Promise<BindDecision> {
  const { directory, options } = checks;
  const token = directory.tokenBySystemId(request.systemId);
  if (!token || token.revokedAt || token.kind !== 'api_sms' || !token.smpp || token.smpp.systemId !== request.systemId) return refused(STATUS.ESME_RINVSYSID, 'unknown system_id');
  const passwordHash = token.smpp.passwordHash;
  if (!(await verifySmppPasswordAsync(request.password, passwordHash))) return refused(STATUS.ESME_RINVPASWD, 'wrong password');
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
