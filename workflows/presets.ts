// Named timeout and retry presets for activities (STYLE: no inline magic numbers).
import type { ActivityOptions } from '@temporalio/workflow';

export const QUICK_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
};
