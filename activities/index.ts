// All activities, built over their dependencies; wired by roles/worker.ts.
import { createLifecycleActivities, type LifecycleDeps } from './lifecycle';
import { createBatchLifecycleActivities } from './lifecycle-batch';
import { createProbeActivities } from './probe';

export interface ActivityDeps {
  readonly identity: string;
  readonly lifecycle: LifecycleDeps;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createProbeActivities(deps.identity), ...createLifecycleActivities(deps.lifecycle), ...createBatchLifecycleActivities(deps.lifecycle) };
}
