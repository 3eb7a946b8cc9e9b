// `npm run admin -- workflow replay --id / --since` on the real stack (cli/workflow-commands.ts;
// docs/operations.md, "Replaying workflows"): a message sent through the HTTP API reaches its
// final state, its batch workflow closes, and replaying it (by message id, and among the recently
// closed batches of the task queue) against this checkout's workflow code is deterministic.
import { connectTemporal } from '../../infra/temporal';
import { eventually } from '../../support/eventually';
import { admin, api, stack } from '../../support/stack';
import { accountsMirrored, createTenant, V1, withAccounts, type Tenant } from '../../support/tenants';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver';

interface Report {
  replayed: number;
  deterministic: number;
  diverged: number;
  results: Array<{ workflowId: string; runId: string; workflowType: string; deterministic: boolean; events: number; replayedEvents: number; divergence: unknown }>;
}

let receiver: WebhookReceiver;
let tenant: Tenant;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  tenant = await createTenant({ name: 'Replay Org', balance: 10 });
  await withAccounts(async (accounts) => { await accounts.setWebhook(tenant.tokenId, receiver.url); });
  await accountsMirrored();
});
afterAll(() => receiver.close());

describe('workflow replay by message id and by recently closed batches (docs/operations.md, Replaying workflows)', () => {
  test('a delivered message\'s batch workflow, once closed, replays deterministic by --id and among --since 1h', async () => {
    const to = `+491511${String(Date.now() % 100000).padStart(5, '0')}12`.slice(0, 14);
    const sent = await api(`${V1}/sms`, { token: tenant.token, body: { from: 'Replay', to, text: 'replay me' } });
    expect(sent.status).toBe(201);
    const id = (sent.body as { entity: { id: string } }).entity.id;
    await eventually(async () => {
      const got = await api(`${V1}/sms/${id}`, { token: tenant.token });
      return (got.body as { entity?: { status: string } }).entity?.status === 'delivered';
    }, { what: `message ${id} delivered`, timeoutMs: 30_000, intervalMs: 100 });
    await receiver.waitFor(() => receiver.forMessage(id).some((d) => d.body['status'] === 'delivered'), 30_000);
    const workflowId = await eventually(async () => ((await api(`${V1}/sms/${id}/dlrs`, { token: tenant.token })).body as { workflow?: { id: string } | null }).workflow?.id, { what: `the workflow of ${id}`, until: (wf) => wf !== undefined, timeoutMs: 30_000, intervalMs: 100 }) as string;
    const temporal = await connectTemporal({ address: stack().temporalAddress, namespace: stack().namespace });
    try {
      await temporal.client.workflow.getHandle(workflowId).result();
    } finally {
      await temporal.close();
    }

    const byId = await admin<Report>('workflow', 'replay', '--id', id);
    expect(byId).toMatchObject({ diverged: 0 });
    expect(byId.replayed).toBeGreaterThanOrEqual(1);
    expect(byId.results.every((r) => r.workflowId === workflowId && r.workflowType === 'smsBatchLifecycle' && r.deterministic && r.divergence === null)).toBe(true);
    // Closed: every event replayed.
    expect(byId.results.every((r) => r.replayedEvents === r.events && r.events > 0)).toBe(true);

    const recent = await admin<Report>('workflow', 'replay', '--since', '1h', '--limit', '200');
    expect(recent.diverged).toBe(0);
    expect(recent.results.map((r) => r.workflowId)).toContain(workflowId);
    expect(recent.results.every((r) => r.workflowType === 'smsBatchLifecycle')).toBe(true);
  }, 120_000);
});
