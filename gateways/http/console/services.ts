// What the console works with beyond the SMS API's services (HttpDeps.services): the same
// stores the admin CLI uses, built once per process by roles/console-services.ts.
import type { BalanceReader } from '../../../core/accounts';
import type { ConsoleSession, Operator } from '../../../core/console/operators';
import type { SearchRequest } from '../../../core/filters/grammar-b';
import type { Datasource } from '../../../core/ingest/types';
import type { DeadDlr, LifecycleOwners, WebhookTargetPolicy } from '../../../core/sms';
import type { Resolver } from '../../../infra/webhook-target';
import type { AccountStore } from '../../../stores/account-store';
import type { DatasourceDirectory } from '../../../stores/datasource-store';
import type { SearchResult, SearchScope } from '../../../stores/audience-search';
import type { ContactEvent } from '../../../stores/contact-events';
import type { AudienceServices } from '../audience-api';

export interface ConsoleOperators {
  verify(email: string, password: string): Promise<Operator | null>;
  startSession(operator: Operator): Promise<{ cookie: string; session: ConsoleSession }>;
  session(cookie: string): Promise<ConsoleSession | null>;
  endSession(cookie: string): Promise<void>;
}

export interface StoredDeadDlr extends DeadDlr {
  readonly key: string;
}

export interface ConsoleDeadLetters {
  /** Dead letters of these tokens. */
  list(tokenIds: readonly string[]): Promise<StoredDeadDlr[]>;
  /** Delivers one again on a fresh retry schedule and removes it from the dead letters. */
  redrive(dead: StoredDeadDlr): Promise<void>;
}

export interface ConsoleServices {
  readonly operators: ConsoleOperators;
  readonly accounts: AccountStore;
  readonly balances: BalanceReader;
  readonly datasources: {
    list(filter: { orgId: string }): Promise<Datasource[]>;
    create(projectId: string, name: string, options?: { strict?: boolean }): Promise<Datasource>;
  };
  readonly specs: Pick<DatasourceDirectory, 'attributes' | 'eventTypes'>;
  readonly audience?: { search(request: SearchRequest, scope: SearchScope): Promise<SearchResult> };
  /** The segments the audience API stores (served with the audience search). */
  readonly segments?: AudienceServices['segments'];
  /** A contact's recent events (the contact page; served with the audience search). */
  readonly contactEvents?: { recent(projectId: string, audienceId: string, limit: number): Promise<ContactEvent[]> };
  readonly deadLetters: ConsoleDeadLetters;
  /** Which batch lifecycle holds a message (none: a per-message lifecycle, `sms-<id>`). */
  readonly lifecycleOwners?: Pick<LifecycleOwners, 'find'>;
  /** The Temporal UI page of a workflow, when the UI is known (the embedded dev server's). */
  readonly workflowUrl?: (workflowId: string) => string;
  /** Timeout of the "send test DLR" request. */
  readonly webhookTimeoutMs: number;
  /** Where webhooks may point (WEBHOOK_ALLOW_PRIVATE_TARGETS); absent: public HTTPS only. */
  readonly webhookTargets?: WebhookTargetPolicy;
  /** How webhook hosts are resolved (tests hand in their own; default dns.lookup). */
  readonly webhookResolver?: Resolver;
}
