// What the audience API needs (spec 3), as interfaces the stores implement
// (stores/account-directory.ts, audience-search.ts, segment-store.ts, rate-limiter.ts):
// gateways/http/audience-api.ts takes these, never the stores.
import type { Authenticator } from '../../accounts/ports';
import type { Project } from '../../accounts/types';
import type { SearchRequest } from './parse-search';
import type { SegmentWriter } from './segments';

export interface AudienceAccounts extends Authenticator {
  project(id: string): Project | undefined;
}

export interface SearchScope {
  readonly project: string;
  /** The searching organization: the search's cost is counted against it (stores/search-fairness.ts); the project when absent. */
  readonly org?: string;
  /** IANA name; whole days, roundings and anniversaries follow it. */
  readonly timezone: string;
  readonly now: Date;
}

export interface SearchResult {
  readonly entities: Record<string, unknown>[];
  readonly total: number;
  readonly cursor: string | null;
  readonly aggregations?: Record<string, unknown>;
}

export interface AudienceSearch {
  search(request: SearchRequest, scope: SearchScope): Promise<SearchResult>;
}

export interface Segment {
  readonly project: string;
  readonly slug: string;
  readonly name: string;
  /** The filter tree as sent (a node of spec 3 §2.3), validated when stored. */
  readonly root: unknown;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Saved segments as the audience API reads and writes them. */
export interface SegmentBook extends SegmentWriter<{ segment: Segment; created: boolean }> {
  get(project: string, slug: string): Promise<Segment | null>;
  list(project: string): Promise<Segment[]>;
  remove(project: string, slug: string): Promise<boolean>;
}
