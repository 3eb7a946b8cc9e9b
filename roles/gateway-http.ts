// The gateway-http role: the Express app (SMS API v1, legacy API, ops endpoints) on HTTP_PORT,
// with the services behind it wired over the engines of this process.
import type { Server } from 'node:http';
import type { Config } from '../config';
import { LookupService, SimulatedHlr } from '../core/lookup';
import type { Logger } from '../infra/logger';
import { createHttpApp, type SmsServices } from '../gateways/http/app';
import type { IngestServices } from '../gateways/http/ingest-api';
import { createHttpServer } from '../gateways/http/server';
import { DlrHistory } from '../stores/dlr-history';
import { KvLifecycleOwners } from '../stores/lifecycle-records';
import { LookupHistory, NatsLookupStore } from '../stores/lookup-history';
import { MessageHistory } from '../stores/message-history';
import { MessageStats } from '../stores/message-stats';
import { DatasourceDirectory, DatasourceStore } from '../stores/datasource-store';
import { JetStreamIngestBus } from '../infra/bus/ingest-bus';
import { JetStreamLookupQueue } from '../infra/bus/lookup-queue';
import { IngestUsage } from '../stores/ingest-usage';
import { AudienceReader } from '../stores/audience-reader';
import type { AudienceServices } from '../gateways/http/audience-api';
import { audienceCursorKey } from '../stores/audience-cursor-key';
import { AudienceSearch, DEFAULT_CEILING, heavySettings, type SearchFairness } from '../stores/audience-search';
import { SearchCosts } from '../stores/search-fairness';
import { SegmentStore } from '../stores/segment-store';
import { AnalyticsSql } from '../stores/analytics-sql';
import type { AnalyticsServices } from '../gateways/http/analytics-api';
import type { AcceptanceCore } from './acceptance';
import type { Engines } from './engines';
import { buildConsoleServices } from './console-services';
import type { AdminServices } from '../gateways/http/admin-api';
import { DATASOURCE_KEYS } from '../stores/datasource-store';
import { provisioningOver } from '../stores/provisioning';

export interface HttpRole {
  readonly server: Server;
  stop(): Promise<void>;
}

/** The fair share of the audience search configured (AUDIENCE_FAIRNESS ...), undefined when off. */
export function searchFairness(f: Config['audience']['fairness']): SearchFairness | undefined {
  if (!f.on) return undefined;
  return { costs: new SearchCosts(f), heavySettings: heavySettings(f.heavyNice, f.heavyMaxThreads) };
}

/** The audience API's services (spec 3 §4.2): search over this process's ClickHouse, segments and cursor key in KV. */
export async function buildAudienceServices(engines: Engines, fairness?: Config['audience']['fairness']): Promise<AudienceServices> {
  if (!engines.clickhouse) throw new Error('gateway-http needs ClickHouse in its process');
  const segments = new SegmentStore(engines.nats.kv.accounts);
  const search = new AudienceSearch(engines.clickhouse, segments, await audienceCursorKey(engines.nats.kv.accounts), DEFAULT_CEILING, fairness === undefined ? undefined : searchFairness(fairness));
  return { accounts: engines.directory, search, segments, rateLimiter: engines.rateLimiter };
}

/** Analysts' SQL (docs/analytics.md) over this process's ClickHouse. */
export function buildAnalyticsServices(engines: Engines): AnalyticsServices {
  if (!engines.clickhouse) throw new Error('gateway-http needs ClickHouse in its process');
  return { accounts: engines.directory, sql: new AnalyticsSql(engines.clickhouse), rateLimiter: engines.rateLimiter };
}

/** The ingestion API's services over this process's engines (ClickHouse only for the usage read). */
export function buildIngestServices(engines: Engines): IngestServices {
  if (!engines.clickhouse) throw new Error('gateway-http needs ClickHouse in its process');
  return {
    accounts: engines.directory,
    datasources: new DatasourceDirectory(engines.directory),
    specs: new DatasourceStore(engines.nats.kv.accounts, engines.accounts),
    bus: new JetStreamIngestBus(engines.nats.pipeline, engines.nats.kv.ingestState, () => engines.nats.nc.info?.max_payload),
    usage: new IngestUsage(engines.clickhouse),
    contacts: new AudienceReader(engines.clickhouse),
    rateLimiter: engines.rateLimiter,
  };
}

/** The SMS API's services over the process's acceptance core and this process's ClickHouse. */
export function buildSmsServices(engines: Engines, core: AcceptanceCore): SmsServices {
  if (!engines.clickhouse) throw new Error('gateway-http needs ClickHouse in its process');
  const lookupStore = new NatsLookupStore(engines.nats.kv.messages, new JetStreamLookupQueue(engines.nats.pipeline));
  return {
    acceptance: core.acceptance,
    lookups: new LookupService({ prices: core.prices, funds: core.funds, hlr: new SimulatedHlr(), store: lookupStore }),
    states: core.states,
    lookupStore,
    messageHistory: new MessageHistory(engines.clickhouse),
    lookupHistory: new LookupHistory(engines.clickhouse),
    dlrHistory: new DlrHistory(engines.clickhouse, new KvLifecycleOwners(engines.nats.kv.idempotency)),
    stats: new MessageStats(engines.clickhouse),
    optOuts: core.optOuts,
    ...(core.scheduledCancel ? { scheduledCancel: core.scheduledCancel } : {}),
  };
}

/** The admin API's services (/admin/v1) when ADMIN_TOKEN is set; none (the API is off) otherwise. */
export function buildAdminServices(config: Config, engines: Engines): AdminServices | undefined {
  if (config.admin.token === undefined) return undefined;
  const provisioning = provisioningOver({ accounts: engines.accounts, balances: engines.balances, accountsKv: engines.nats.kv.accounts }, { allowPrivateTargets: config.lifecycle.webhook.allowPrivateTargets });
  return { token: config.admin.token, provisioning, mirror: engines.directory, datasourceKey: DATASOURCE_KEYS.datasource };
}

export async function startHttpGateway(config: Config, engines: Engines, core: AcceptanceCore, log: Logger): Promise<HttpRole> {
  const audience = await buildAudienceServices(engines, config.audience.fairness);
  const app = createHttpApp({ config, engines, services: buildSmsServices(engines, core), ingest: buildIngestServices(engines), audience, analytics: buildAnalyticsServices(engines), admin: buildAdminServices(config, engines), console: await buildConsoleServices(config, engines, audience), log });
  // Header/request timeouts and full responses for the HTTP parser's own refusals.
  const server = createHttpServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  log.info({ port: config.http.port }, 'http gateway listening');
  return {
    server,
    stop: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
