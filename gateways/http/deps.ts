// What the HTTP app is built over: the configuration, the engines' ports it reads (accounts,
// balances, rate limits, health probes) and the services of each API, all as core ports, built
// once per process by roles/gateway-http.ts. Apart from app.ts so routers can take it too.
import type { Config } from '../../config';
import type { Authenticator, BalanceReader, PriceList, RateLimits } from '../../core/accounts';
import type { Lookup, LookupService } from '../../core/lookup';
import type { CurrentReader, DlrHistoryReader, HistoryReader, OptOutList, ScheduledCancel, SmsAcceptance, SmsMessage, StatsReader } from '../../core/sms';
import type { Logger } from '../../infra/logger';
import type { AudienceServices } from './audience-api';
import type { IngestServices } from './ingest-api';
import type { ConsoleServices } from './console/services';

/** The services behind the SMS API routes. */
export interface SmsServices {
  readonly acceptance: SmsAcceptance;
  readonly lookups: LookupService;
  readonly states: CurrentReader<SmsMessage>;
  readonly lookupStore: CurrentReader<Lookup>;
  readonly messageHistory: HistoryReader<SmsMessage>;
  readonly lookupHistory: HistoryReader<Lookup>;
  readonly dlrHistory: DlrHistoryReader;
  /** GET /sms/stats and GET /lookup/stats (stores/message-stats.ts). */
  readonly stats: StatsReader;
  /** The opt-out lists behind /transactional/v1/opt-outs (gateways/http/opt-outs-api.ts), mounted when given. */
  readonly optOuts?: OptOutList;
  /** POST /transactional/v1/sms/{id}/cancel (DESIGN §4 Scheduling), mounted when given. */
  readonly scheduledCancel?: Pick<ScheduledCancel, 'cancel'>;
}

/** What the HTTP adapters read from the engines of the process. */
export interface HttpEngines {
  readonly directory: Authenticator & PriceList;
  readonly balances: BalanceReader;
  readonly rateLimiter: RateLimits;
  /** Round-trip probes of each engine, for /health. */
  readonly probes: Readonly<Record<string, () => Promise<number>>>;
}

export interface HttpDeps {
  readonly config: Config;
  readonly engines: HttpEngines;
  readonly services: SmsServices;
  /** The ingestion API's services (spec 2), mounted at config.ingest.basePath when given. */
  readonly ingest?: IngestServices;
  /** The audience API's services (spec 3 §4.2), mounted at config.audience.basePath when given. */
  readonly audience?: AudienceServices;
  /** The web console's services (docs/console.md), mounted at /console when given. */
  readonly console?: ConsoleServices;
  readonly log: Logger;
}
