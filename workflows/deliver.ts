// Delivering one DLR from workflow code: a first attempt as a local activity (the common case
// costs no extra history events), then, after the initial interval, the server-side retry
// schedule of a regular activity; when the window closes, the DLR is dead-lettered.
import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { LifecycleActivities } from '../activities/lifecycle';
import { LOCAL_WRITE, webhookActivity, type WebhookSchedule } from './presets';
import type { DlrDelivery } from './types';

export async function deliverWithRetries(delivery: DlrDelivery, schedule: WebhookSchedule, firstAttemptMade = false): Promise<'delivered' | 'dead'> {
  const local = proxyLocalActivities<LifecycleActivities>({ ...LOCAL_WRITE, startToCloseTimeout: schedule.attemptTimeoutMs + 2_000, retry: { maximumAttempts: 1 } });
  const remote = proxyActivities<LifecycleActivities>(webhookActivity(schedule));
  const writes = proxyLocalActivities<LifecycleActivities>(LOCAL_WRITE);
  if (!firstAttemptMade) {
    try {
      await local.deliverDlrOnce(delivery);
      return 'delivered';
    } catch (err) {
      // A failed local activity surfaces as ActivityFailure or as its ApplicationFailure cause.
      if (!(err instanceof ActivityFailure || err instanceof ApplicationFailure)) throw err;
    }
  }
  await sleep(schedule.initialIntervalMs);
  try {
    await remote.deliverDlr(delivery);
    return 'delivered';
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    await writes.deadLetter(delivery, err.cause?.message ?? err.message);
    return 'dead';
  }
}
