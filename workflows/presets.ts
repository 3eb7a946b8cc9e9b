// Named timeout and retry presets for activities (STYLE: no inline magic numbers).
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';

export const QUICK_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '5 seconds', maximumAttempts: 5 },
};

/** Writes to NATS (KV, JetStream) from the workflow's own worker: cheap, retried until they succeed. */
export const LOCAL_WRITE: LocalActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
};

/**
 * Recording a batch of transitions and the first attempt of up to `attempts` DLRs: the recording
 * is retried until it succeeds; the webhook attempts never fail the activity (see `settle`).
 */
export function settleOptions(schedule: WebhookSchedule, attempts: number): LocalActivityOptions {
  return { ...LOCAL_WRITE, startToCloseTimeout: 10_000 + attempts * (schedule.attemptTimeoutMs + 1_000) };
}

export interface WebhookSchedule {
  readonly initialIntervalMs: number;
  readonly maximumIntervalMs: number;
  readonly retryHours: number;
  readonly attemptTimeoutMs: number;
}

/**
 * DLR webhook delivery (DESIGN §4): each attempt bounded by the timeout, retries from the
 * initial interval doubling to the cap, for the retry window. The schedule lives in the
 * activity's server-side retry policy, so retries add no workflow history events.
 */
export function webhookActivity(schedule: WebhookSchedule): ActivityOptions {
  return {
    startToCloseTimeout: schedule.attemptTimeoutMs + 5_000,
    scheduleToCloseTimeout: schedule.retryHours * 3600 * 1000,
    retry: { initialInterval: schedule.initialIntervalMs, backoffCoefficient: 2, maximumInterval: schedule.maximumIntervalMs },
  };
}
