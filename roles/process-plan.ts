// Which roles run in which process on one machine. `npm start` asks for every role; with
// PROCESS_LAYOUT=split (the default) the lifecycle worker and the carrier connector (with the
// simulator SMSC it talks to) each get a child process of their own, so that the lifecycle's
// work and the gateways' never share one event loop (docs/decisions.md, "One machine, three
// processes"). A deliberate --role selection is run as asked.
import { join } from 'node:path';

export const ROLES = ['gateway-http', 'gateway-smpp', 'worker', 'simulator', 'carrier', 'ingest-writer'] as const;
export type Role = (typeof ROLES)[number];

export interface ChildPlan {
  /** Names the process in logs, metrics and its data directory. */
  readonly name: string;
  readonly roles: readonly Role[];
  /** Yields the CPU to the gateways (BACKGROUND_NICE): none of its roles answers a client. */
  readonly background: boolean;
}

export interface ProcessPlan {
  /** The roles of this process. */
  readonly own: readonly Role[];
  /** The role processes this one starts and supervises. */
  readonly children: readonly ChildPlan[];
}

const SPLIT: readonly ChildPlan[] = [
  { name: 'lifecycle', roles: ['worker'], background: true },
  { name: 'carrier', roles: ['carrier', 'simulator'], background: true },
];

/** What a role process is told: the engines of its parent (it spawns none), its own data directory, no demo seeding. */
export function roleProcessEnv(child: ChildPlan, parent: { readonly natsUrl: string; readonly temporalAddress: string; readonly dataDir: string }): Record<string, string> {
  return { NATS_URL: parent.natsUrl, TEMPORAL_ADDRESS: parent.temporalAddress, DATA_DIR: join(parent.dataDir, 'processes', child.name), DEMO_SEED: 'false' };
}

/**
 * `every`: the process was started with every role (`--role=all`, the default); `child`: it is
 * itself a role process (never split again).
 */
export function planProcesses(roles: readonly Role[], options: { every: boolean; layout: 'split' | 'single'; child: boolean }): ProcessPlan {
  if (!options.every || options.layout === 'single' || options.child) return { own: roles, children: [] };
  const moved = new Set<Role>(SPLIT.flatMap((c) => c.roles));
  return { own: roles.filter((r) => !moved.has(r)), children: SPLIT };
}
