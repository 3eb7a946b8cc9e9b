// Activities of the system probe workflow.
import { hostname } from 'node:os';

export interface ProbeActivities {
  describeWorker(): Promise<string>;
  /** Does nothing: the benchmark ceiling workflow's stand-in for real activities. */
  noop(): Promise<void>;
}

export function createProbeActivities(identity: string): ProbeActivities {
  return {
    describeWorker: async () => `${identity}@${hostname()}:${process.pid}`,
    noop: async () => undefined,
  };
}
