// All activities, built over their dependencies; wired by roles/worker.ts.
import { createProbeActivities } from './probe';

export interface ActivityDeps {
  readonly identity: string;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createProbeActivities(deps.identity) };
}
