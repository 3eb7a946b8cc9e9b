// Console operators and sessions in NATS KV (docs/console.md), in two buckets of their own so
// that the accounts mirror every process keeps never holds them:
//   console_operators: operator.<id> (an Operator), operatoremail.<sha256 of the email> → id
//   console_sessions:  session.<sha256 of the cookie value> (a ConsoleSession); the bucket's TTL
//                      ends every session SESSION_HOURS after sign-in even if nobody signs out.
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { hashSmppPassword as hashPassword, verifySmppPasswordAsync as verifyPassword } from '../core/accounts';
import { newOpaque, newOperatorPassword, normalizeEmail, SESSION_HOURS, sha256Hex, type ConsoleSession, type Operator } from '../core/console/operators';
import { newId } from '../core/ids';
import { BUCKETS } from '../core/bus/names';
import { isRevisionConflict } from '../infra/nats';
import { AccountConflictError, AccountNotFoundError } from './account-store';
import { listRecords, readRecord } from './kv-records';

const KEYS = {
  operator: (id: string) => `operator.${id}`,
  email: (email: string) => `operatoremail.${sha256Hex(email)}`,
  session: (cookie: string) => `session.${sha256Hex(cookie)}`,
} as const;

/** Compared against when the email is unknown, so that both answers take one scrypt; made at the first sign-in, not at load (every admin command loads this module). */
let dummyHash: string | undefined;
const unknownOperatorHash = (): string => (dummyHash ??= hashPassword(newOperatorPassword()));

export class OperatorStore {
  constructor(private readonly operators: KV, private readonly sessions: KV) {}

  /** Opens (creating when missing) the two buckets on a NATS connection. */
  static async open(nc: NatsConnection, replicas = 1): Promise<OperatorStore> {
    const kvm = new Kvm(nc);
    return new OperatorStore(
      await kvm.create(BUCKETS.consoleOperators, { replicas, history: 1 }),
      await kvm.create(BUCKETS.consoleSessions, { replicas, history: 1, ttl: SESSION_HOURS * 3600 * 1000 }),
    );
  }

  /** Creates an operator of `orgId`; the password is returned once and only its scrypt hash is kept. */
  async create(orgId: string, emailText: string): Promise<{ operator: Operator; password: string }> {
    const email = normalizeEmail(emailText);
    if (!email) throw new AccountConflictError(`"${emailText.slice(0, 100)}" is not an email address`);
    const password = newOperatorPassword();
    const operator: Operator = { id: newId(), orgId, email, passwordHash: hashPassword(password), createdAt: new Date().toISOString() };
    try {
      await this.operators.create(KEYS.email(email), JSON.stringify(operator.id));
    } catch (err) {
      // Only a lost create is a taken e-mail; anything else (NATS unreachable, a timeout) is reported as itself.
      if (!isRevisionConflict(err)) throw err;
      throw new AccountConflictError(`an operator with the email ${email} exists`);
    }
    await this.operators.put(KEYS.operator(operator.id), JSON.stringify(operator));
    return { operator, password };
  }

  async list(orgId?: string): Promise<Operator[]> {
    const all = await listRecords<Operator>(this.operators, 'operator');
    return all.filter((o) => !orgId || o.orgId === orgId).sort((a, b) => a.email.localeCompare(b.email));
  }

  async remove(id: string): Promise<Operator> {
    const operator = await readRecord<Operator>(this.operators, KEYS.operator(id));
    if (!operator) throw new AccountNotFoundError(`operator ${id} not found`);
    await this.operators.delete(KEYS.email(operator.email));
    await this.operators.delete(KEYS.operator(id));
    return operator;
  }

  /** The operator whose email and password these are, or null (one scrypt either way). */
  async verify(emailText: string, password: string): Promise<Operator | null> {
    const email = normalizeEmail(emailText) ?? '';
    const id = email ? await readRecord<string>(this.operators, KEYS.email(email)) : null;
    const operator = id ? await readRecord<Operator>(this.operators, KEYS.operator(id)) : null;
    const ok = await verifyPassword(password, operator?.passwordHash ?? unknownOperatorHash());
    return ok && operator ? operator : null;
  }

  /** A new session for the operator: the cookie value (returned once) and the stored record. */
  async startSession(operator: Operator): Promise<{ cookie: string; session: ConsoleSession }> {
    const cookie = newOpaque();
    const created = new Date();
    const session: ConsoleSession = {
      operatorId: operator.id, orgId: operator.orgId, email: operator.email, csrf: newOpaque(),
      createdAt: created.toISOString(), expiresAt: new Date(created.getTime() + SESSION_HOURS * 3600 * 1000).toISOString(),
    };
    await this.sessions.put(KEYS.session(cookie), JSON.stringify(session));
    return { cookie, session };
  }

  /** The live session of a cookie value, or null (unknown, ended, expired, or its operator removed). */
  async session(cookie: string): Promise<ConsoleSession | null> {
    const session = await readRecord<ConsoleSession>(this.sessions, KEYS.session(cookie));
    if (!session || Date.parse(session.expiresAt) <= Date.now()) return null;
    const operator = await readRecord<Operator>(this.operators, KEYS.operator(session.operatorId));
    return operator && operator.orgId === session.orgId ? session : null;
  }

  async endSession(cookie: string): Promise<void> {
    await this.sessions.delete(KEYS.session(cookie));
  }
}
