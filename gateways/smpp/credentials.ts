// SMPP bind passwords are stored as salted scrypt hashes (core/accounts/secrets.ts). Checking
// one with scryptSync takes ~60 ms of CPU on this machine, which would stall every session of
// the process during each bind; this twin of verifySmppPassword runs scrypt on libuv's
// thread pool instead, with the same stored format and the same constant-time comparison.
import { scrypt, timingSafeEqual } from 'node:crypto';

export function verifySmppPasswordAsync(password: string, stored: string): Promise<boolean> {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return Promise.resolve(false);
  const expected = Buffer.from(hash, 'base64');
  return new Promise((resolve) => {
    scrypt(password, Buffer.from(salt, 'base64'), expected.length, (err, actual) => {
      resolve(!err && actual.length === expected.length && timingSafeEqual(actual, expected));
    });
  });
}
