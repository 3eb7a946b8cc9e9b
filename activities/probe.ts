// Activities of the system probe workflow.
import { hostname } from 'node:os';

export interface ProbeActivities {
  describeWorker(): Promise<string>;
}

export function createProbeActivities(identity: string): ProbeActivities {
  return {
    describeWorker: async () => `${identity}@${hostname()}:${process.pid}`,
  };
}
