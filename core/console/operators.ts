// Console operators (docs/console.md): a person who signs in to /console for one organization,
// with an email and a password stored as a salted scrypt hash; and their sessions, whose cookie
// value is random and stored only as its SHA-256 (like token values), each with its CSRF token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export interface Operator {
  readonly id: string;
  readonly orgId: string;
  /** Lower-cased; unique across organizations (it names the operator at sign-in). */
  readonly email: string;
  readonly passwordHash: string;
  readonly createdAt: string;
}

export interface ConsoleSession {
  readonly operatorId: string;
  readonly orgId: string;
  readonly email: string;
  /** Sent back with every change (a hidden form field); compared in constant time. */
  readonly csrf: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

/** How long a session lasts from sign-in (the sessions bucket's TTL matches). */
export const SESSION_HOURS = 12;

const EMAIL = /^[^\s@<>"']{1,64}@[^\s@<>"']{1,190}\.[^\s@<>"']{1,63}$/;

/** The email as stored and looked up, or undefined when it is not one. */
export function normalizeEmail(text: string): string | undefined {
  const email = text.trim().toLowerCase();
  return EMAIL.test(email) ? email : undefined;
}

/** A password shown once: 24 URL-safe characters (144 random bits). */
export function newOperatorPassword(): string {
  return randomBytes(18).toString('base64url');
}

/** A random opaque value (session cookies, CSRF tokens). */
export function newOpaque(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Constant-time equality of two strings (CSRF tokens). */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
