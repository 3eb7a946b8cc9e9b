#!/usr/bin/env node
// Is node_modules what package-lock.json locks? Compares the lockfile with the record npm
// keeps of what it installed (node_modules/.package-lock.json, written by every npm install),
// and package.json with the lockfile's root entry. Plain Node, no dependencies: the bootstrap
// (scripts/bootstrap.mjs) runs it before node_modules exists.
//   node scripts/npm-deps.mjs [root]   prints { "state": ..., "reason": ... } as JSON
// States:
//   current      node_modules holds exactly the locked versions: nothing to do
//   install      node_modules is absent or differs: install the locked versions (lockfile read-only)
//   update-lock  package.json names dependencies the lockfile does not have (or is missing):
//                only `npm install` (which rewrites the lockfile) can fix that
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const DEP_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));

/** The first way package.json's dependencies differ from the lockfile's root entry, or undefined. */
function packageJsonVsLock(pkg, lockRoot) {
  for (const field of DEP_FIELDS) {
    const wanted = pkg[field] ?? {};
    const locked = lockRoot[field] ?? {};
    for (const name of new Set([...Object.keys(wanted), ...Object.keys(locked)])) {
      if (wanted[name] !== locked[name]) {
        const was = locked[name] === undefined ? 'not in the lockfile' : `${locked[name]} in the lockfile`;
        return `${field}.${name}: ${wanted[name] ?? 'removed'} in package.json, ${was}`;
      }
    }
  }
  return undefined;
}

const packageName = (key) => key.replace(/^.*node_modules\//, '');

/** The first way the installed tree differs from the locked one, or undefined. */
function installedVsLock(locked, installed) {
  for (const [key, entry] of Object.entries(locked)) {
    if (key === '') continue;
    const have = installed[key];
    if (!have) {
      // Another platform's optional package (@swc/core-darwin-arm64 on Linux, ...) is never
      // installed; npm also leaves out an optional package that failed to install.
      if (entry.optional || entry.devOptional) continue;
      return `${packageName(key)}@${entry.version} is locked but not installed`;
    }
    if (have.version !== entry.version || (have.integrity && entry.integrity && have.integrity !== entry.integrity)) {
      return `${packageName(key)}: ${have.version} installed, ${entry.version} locked`;
    }
  }
  for (const key of Object.keys(installed)) {
    if (!(key in locked)) return `${packageName(key)} is installed but not in the lockfile`;
  }
  return undefined;
}

export function npmState(root) {
  const lockFile = join(root, 'package-lock.json');
  if (!existsSync(lockFile)) return { state: 'update-lock', reason: 'package-lock.json is missing' };
  const lock = readJson(lockFile);
  const lockMismatch = packageJsonVsLock(readJson(join(root, 'package.json')), lock.packages?.[''] ?? {});
  if (lockMismatch) return { state: 'update-lock', reason: lockMismatch };
  const hidden = join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(hidden)) return { state: 'install', reason: 'node_modules is absent (or was not installed by npm)' };
  const difference = installedVsLock(lock.packages ?? {}, readJson(hidden).packages ?? {});
  return difference ? { state: 'install', reason: difference } : { state: 'current', reason: 'node_modules holds the locked versions' };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(npmState(resolve(process.argv[2] ?? '.')))}\n`);
}
