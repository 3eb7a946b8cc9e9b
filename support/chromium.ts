// The browser the console suite drives: Debian's `chromium` package (its system executable,
// driven by playwright-core), installed with apt-get when missing, with its output shown.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

function found(): string | undefined {
  const configured = process.env['CHROMIUM_PATH'];
  if (configured) return existsSync(configured) ? configured : undefined;
  return CANDIDATES.find((path) => existsSync(path));
}

/** The chromium executable; installs Debian's package first when none is present. */
export function ensureChromium(): string {
  const present = found();
  if (present) return present;
  process.stderr.write('[console suite] chromium is missing: installing Debian\'s package (apt-get install -y chromium)...\n');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const apt = (args: string[]): number => spawnSync(root ? 'apt-get' : 'sudo', root ? args : ['-n', 'apt-get', ...args], { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status ?? 1;
  if (apt(['install', '-y', 'chromium']) !== 0 && (apt(['update']) !== 0 || apt(['install', '-y', 'chromium']) !== 0)) {
    throw new Error('chromium is not installed and `apt-get install -y chromium` failed: install it (Debian/Ubuntu: `sudo apt-get install -y chromium`) or set CHROMIUM_PATH to a Chromium executable');
  }
  const installed = found();
  if (!installed) throw new Error(`apt-get installed chromium but none of ${CANDIDATES.join(', ')} exists: set CHROMIUM_PATH`);
  return installed;
}
