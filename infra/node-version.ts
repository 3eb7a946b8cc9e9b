// The Node.js the product runs on, checked before anything else is loaded (main.ts imports this
// module first): an older Node would otherwise fail deep inside a dependency (undici 8, the
// webhook client, needs 22.19) with an error that names nothing to fix. `npm start` and `npm test`
// run Node 24 LTS from node_modules/.bin/node (scripts/bootstrap.mjs installs it).

/** The oldest Node.js the product runs on: [major, minor]. */
export const MINIMUM_NODE = [22, 19] as const;

/** Why `version` (process.versions.node) cannot run the product, or null when it can. */
export function unsupportedNode(version: string): string | null {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > MINIMUM_NODE[0] || (major === MINIMUM_NODE[0] && minor >= MINIMUM_NODE[1])) return null;
  return `sms-platform needs Node.js >= ${MINIMUM_NODE.join('.')} (this is ${version}): run it with \`npm start\` (or \`npm run dev\`), which use Node 24 LTS from node_modules/.bin/node, or run dist/main.js with node_modules/.bin/node`;
}

const problem = unsupportedNode(process.versions.node);
if (problem !== null) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
