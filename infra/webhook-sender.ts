// The WebhookSender port over fetch: one POST, bounded by its timeout, the body read and dropped.
import type { WebhookRequest, WebhookSender } from '../core/sms/lifecycle-ports';

export class FetchWebhookSender implements WebhookSender {
  async post(request: WebhookRequest): Promise<number> {
    const res = await fetch(request.url, { method: 'POST', body: request.body, signal: AbortSignal.timeout(request.timeoutMs), headers: { ...request.headers } });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  }
}
