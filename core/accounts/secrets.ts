// Token values, their hashes and SMPP passwords. Token values are 32 random bytes, so an
// unsalted SHA-256 is a safe at-rest form (as for API keys generally); SMPP passwords are
// short by protocol (8 characters), so they get a salted scrypt hash instead.
import { createHash, randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';
import type { TokenKind } from './types';

const PREFIX: Record<TokenKind, string> = { api_sms: 'sms', legacy: 'leg', datasource: 'dst', product: 'prd' };
const TOKEN_SHAPE = /^(sms|leg|dst|prd)_[A-Za-z0-9_-]{43}$/;

export function newTokenValue(kind: TokenKind): string {
  return `${PREFIX[kind]}_${randomBytes(32).toString('base64url')}`;
}

/** True when the text has the shape of a token value (not whether it is valid). */
export function looksLikeToken(text: string): boolean {
  return TOKEN_SHAPE.test(text);
}

export function hashToken(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

const ALNUM = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

export function randomAlnum(length: number): string {
  const bytes = randomBytes(length);
  return Array.from(bytes, (b) => ALNUM[b % ALNUM.length]).join('');
}

/** A Standard Webhooks secret: `whsec_` and the standard base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** True when the text is a `whsec_<standard base64>` secret with a non-empty key. */
export function isWhsecSecret(text: string): boolean {
  const body = text.startsWith('whsec_') ? text.slice(6) : '';
  return body.length > 0 && body.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(body);
}

export function hashSmppPassword(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64')}$${scryptSync(password, salt, 32).toString('base64')}`;
}

function parseScryptHash(stored: string): { salt: Buffer; expected: Buffer } | null {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return null;
  return { salt: Buffer.from(salt, 'base64'), expected: Buffer.from(hash, 'base64') };
}

export function verifySmppPassword(password: string, stored: string): boolean {
  const parsed = parseScryptHash(stored);
  if (!parsed) return false;
  return timingSafeEqual(scryptSync(password, parsed.salt, parsed.expected.length), parsed.expected);
}

/**
 * verifySmppPassword on libuv's thread pool: scrypt takes ~60 ms of CPU here, which would stall
 * every SMPP session of the process during each bind if run synchronously.
 */
export function verifySmppPasswordAsync(password: string, stored: string): Promise<boolean> {
  const parsed = parseScryptHash(stored);
  if (!parsed) return Promise.resolve(false);
  const { salt, expected } = parsed;
  return new Promise((resolve) => {
    scrypt(password, salt, expected.length, (err, actual) => {
      resolve(!err && actual.length === expected.length && timingSafeEqual(actual, expected));
    });
  });
}
