// The console's services over this process's engines: the stores the admin CLI uses
// (accounts, balances, datasources), the operators' store, dead letters over KV and Temporal,
// and the audience search the audience API runs (gateways/http/console/services.ts).
import type { Config } from '../config';
import type { ConsoleServices } from '../gateways/http/console/services';
import type { AudienceServices } from '../gateways/http/audience-api';
import { ContactEvents } from '../stores/contact-events';
import { DatasourceDirectory, DatasourceStore } from '../stores/datasource-store';
import { DeadLetterStore } from '../stores/dead-letter-store';
import { KvLifecycleOwners } from '../stores/lifecycle-records';
import { OperatorStore } from '../stores/operator-store';
import type { Engines } from './engines';

export async function buildConsoleServices(config: Config, engines: Engines, audience: AudienceServices | undefined): Promise<ConsoleServices> {
  const uiBase = config.temporal.address ? undefined : `http://localhost:${config.temporal.uiPort}/namespaces/${encodeURIComponent(config.temporal.namespace)}/workflows/`;
  return {
    operators: await OperatorStore.open(engines.nats.nc, config.nats.replicas),
    accounts: engines.accounts,
    balances: engines.balances,
    datasources: new DatasourceStore(engines.nats.kv.accounts, engines.accounts),
    specs: new DatasourceDirectory(engines.directory),
    ...(audience ? { audience: audience.search, segments: audience.segments } : {}),
    ...(audience && engines.clickhouse ? { contactEvents: new ContactEvents(engines.clickhouse) } : {}),
    deadLetters: new DeadLetterStore(engines.nats.kv.deadDlrs, { client: engines.temporal.client, taskQueue: config.temporal.taskQueue, schedule: config.lifecycle.webhook }),
    lifecycleOwners: new KvLifecycleOwners(engines.nats.kv.idempotency),
    ...(uiBase ? { workflowUrl: (id: string) => `${uiBase}${encodeURIComponent(id)}` } : {}),
    webhookTimeoutMs: config.lifecycle.webhook.attemptTimeoutMs,
    webhookTargets: { allowPrivateTargets: config.lifecycle.webhook.allowPrivateTargets },
  };
}
