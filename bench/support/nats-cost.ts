// The nats-server process of a test stack (found by the port on its command line), so the
// lifecycle bench can report its CPU per message beside the product's and Temporal's.
import { readdirSync, readFileSync } from 'node:fs';

export function natsServerPid(port: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('nats-server') && args.some((a, i) => a === '-p' && args[i + 1] === port)) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}
