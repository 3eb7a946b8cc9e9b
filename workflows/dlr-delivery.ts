// A DLR delivered on its own: inbound and stop messages (spec 1 §6) and re-driven dead letters.
import { deliverWithRetries } from './deliver';
import type { WebhookSchedule } from './presets';
import type { DlrDelivery } from './types';

export async function dlrDelivery(delivery: DlrDelivery, schedule: WebhookSchedule): Promise<'delivered' | 'dead'> {
  return deliverWithRetries(delivery, schedule);
}
