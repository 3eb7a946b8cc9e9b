// A minimal workflow that proves the worker serves the task queue end to end: the smoke
// suite and operators (`npm run admin -- system probe`) start it and read its result.
import { proxyActivities } from '@temporalio/workflow';
import type { ProbeActivities } from '../activities/probe';
import { QUICK_ACTIVITY } from './presets';

const { describeWorker } = proxyActivities<ProbeActivities>(QUICK_ACTIVITY);

export interface ProbeResult {
  readonly echo: string;
  readonly worker: string;
}

export async function systemProbe(echo: string): Promise<ProbeResult> {
  const worker = await describeWorker();
  return { echo, worker };
}
