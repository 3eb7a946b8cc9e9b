// Which of a run's event ids a datasource has stored already (spec 2 §3: a repeated _event_id is
// a duplicate), answered by an in-memory filter per datasource (core/ingest/event-id-filter.ts)
// in front of event_keys: an id the filter rules out is new without a statement, and only the
// ids it may hold are looked up (AudienceWriter.storedEventKeys). Without it, each run's lookup
// grows with the datasource's stored ids (24 ms per 1,000 ids at 100,000 stored, 218 ms at 10 M:
// docs/benchmarks.md).
//
// A filter must hold every id in event_keys. It is built once per datasource and process from
// the table (the ids' hashes read in key order, a page at a time, beside the writer's runs) while
// the writer adds each id it is about to insert, from the moment the build starts; until the
// build ends, that datasource's ids are looked up in the table. The ingest writer is the only
// writer of events (one per deployment: docs/ingestion.md), so nothing else adds ids behind the
// filter's back. Ids released by a contact deletion stay in the filter: a false positive, which
// the table answers.
import { EventIdFilter, idHash, type IdHash } from '../core/ingest';
import type { ClickHouse } from '../infra/clickhouse';
import type { Logger } from '../infra/logger';
import { ingestDedupeFilterBytes, ingestDedupeIds } from '../infra/metrics';
import type { AudienceWriter } from './audience-writer';

export interface EventKey {
  readonly datasourceId: string;
  readonly eventId: string;
}

export interface StoredEventIdsOptions {
  /** Memory all filters may take together; a datasource whose filter would pass it is looked up in the table. 0: no filters. */
  readonly budgetBytes: number;
  /** Ids read per statement while building a filter. */
  readonly pageIds?: number;
}

type FilterState =
  | { readonly kind: 'building'; filter: EventIdFilter | null; readonly early: IdHash[]; readonly built: Promise<void> }
  | { readonly kind: 'ready'; readonly filter: EventIdFilter }
  | { readonly kind: 'off' };

const PAGE_IDS = 100_000;

export class StoredEventIds {
  private readonly filters = new Map<string, FilterState>();
  private readonly pageIds: number;

  constructor(
    private readonly ch: ClickHouse,
    private readonly writer: Pick<AudienceWriter, 'storedEventKeys'>,
    private readonly log: Logger,
    private readonly options: StoredEventIdsOptions,
  ) {
    this.pageIds = options.pageIds ?? PAGE_IDS;
  }

  /** Which of these keys are stored, as `<datasource>:<event id>`. */
  async stored(keys: readonly EventKey[]): Promise<Set<string>> {
    const toLook: EventKey[] = [];
    let ruledOut = 0;
    for (const key of keys) {
      const state = this.stateOf(key.datasourceId);
      if (state.kind === 'ready' && !state.filter.mightHold(idHash(key.eventId))) ruledOut += 1;
      else toLook.push(key);
    }
    if (ruledOut > 0) ingestDedupeIds.inc({ answered_by: 'filter' }, ruledOut);
    if (toLook.length === 0) return new Set();
    ingestDedupeIds.inc({ answered_by: 'event_keys' }, toLook.length);
    return this.writer.storedEventKeys(toLook);
  }

  /** Records ids about to be inserted into events (and event_keys through its view): call before the insert. */
  recordStored(keys: readonly EventKey[]): void {
    for (const key of keys) {
      const state = this.filters.get(key.datasourceId);
      if (!state || state.kind === 'off') continue;
      const hash = idHash(key.eventId);
      if (state.kind === 'building' && !state.filter) state.early.push(hash);
      else if (this.makeRoom(key.datasourceId, state.filter as EventIdFilter)) (state.filter as EventIdFilter).add(hash);
    }
  }

  /** Where a datasource's filter stands (for tests and logs). */
  status(datasourceId: string): FilterState['kind'] | 'none' {
    return this.filters.get(datasourceId)?.kind ?? 'none';
  }

  /** Resolves when the datasource's filter build has ended (ready or off); at once if none runs. */
  async settled(datasourceId: string): Promise<void> {
    const state = this.filters.get(datasourceId);
    if (state?.kind === 'building') await state.built;
  }

  private stateOf(datasourceId: string): FilterState {
    const known = this.filters.get(datasourceId);
    if (known) return known;
    if (this.options.budgetBytes <= 0) {
      const off: FilterState = { kind: 'off' };
      this.filters.set(datasourceId, off);
      return off;
    }
    let resolve = (): void => {};
    const state: Extract<FilterState, { kind: 'building' }> = { kind: 'building', filter: null, early: [], built: new Promise<void>((r) => { resolve = r; }) };
    // Registered before the build's first statement, so every id recorded from now on reaches the filter.
    this.filters.set(datasourceId, state);
    void this.build(datasourceId, state).catch((err: unknown) => {
      this.log.warn({ err, datasourceId }, 'ingest writer: building the filter of stored event ids failed; this datasource\'s ids are looked up in event_keys');
      this.turnOff(datasourceId);
    }).finally(resolve);
    return state;
  }

  private async build(datasourceId: string, state: Extract<FilterState, { kind: 'building' }>): Promise<void> {
    const started = performance.now();
    const stored = await this.countStored(datasourceId);
    const filter = new EventIdFilter(stored + Math.ceil(stored / 4));
    if (this.usedBytes() + filter.bytes > this.options.budgetBytes) {
      this.log.warn({ datasourceId, storedIds: stored, filterBytes: filter.bytes, budgetBytes: this.options.budgetBytes }, 'ingest writer: no room for this datasource\'s filter of stored event ids (INGEST_DEDUPE_FILTER_MB); its ids are looked up in event_keys');
      this.turnOff(datasourceId);
      return;
    }
    state.filter = filter;
    for (const hash of state.early.splice(0)) filter.add(hash);
    this.updateBytes();
    let after: string | null = null;
    for (;;) {
      const page = await this.hashPage(datasourceId, after);
      if (this.filters.get(datasourceId) !== state) return; // turned off meanwhile
      const { lo, hi } = page;
      for (let i = 0; i < lo.length; i += 1) {
        if (filter.growthBytes > 0 && !this.makeRoom(datasourceId, filter)) return;
        filter.addHalves(lo[i] as number, hi[i] as number);
      }
      if (page.lo.length < this.pageIds) break;
      after = page.last;
    }
    this.filters.set(datasourceId, { kind: 'ready', filter });
    this.log.info({ datasourceId, storedIds: filter.count, filterBytes: filter.bytes, ms: Math.round(performance.now() - started) }, 'ingest writer: filter of stored event ids ready');
  }

  /** Whether the filter may take its next id within the budget; turns the datasource off if not. */
  private makeRoom(datasourceId: string, filter: EventIdFilter): boolean {
    const growth = filter.growthBytes;
    if (growth === 0 || this.usedBytes() + growth <= this.options.budgetBytes) {
      if (growth > 0) queueMicrotask(() => this.updateBytes());
      return true;
    }
    this.log.warn({ datasourceId, storedIds: filter.count, filterBytes: filter.bytes, budgetBytes: this.options.budgetBytes }, 'ingest writer: the filter of stored event ids outgrew INGEST_DEDUPE_FILTER_MB; this datasource\'s ids are looked up in event_keys');
    this.turnOff(datasourceId);
    return false;
  }

  private turnOff(datasourceId: string): void {
    this.filters.set(datasourceId, { kind: 'off' });
    this.updateBytes();
  }

  private usedBytes(): number {
    let bytes = 0;
    for (const state of this.filters.values()) if (state.kind !== 'off' && state.filter) bytes += state.filter.bytes;
    return bytes;
  }

  private updateBytes(): void {
    ingestDedupeFilterBytes.set(this.usedBytes());
  }

  private async countStored(datasourceId: string): Promise<number> {
    const result = await this.ch.client.query({
      query: `SELECT count() AS n FROM ${this.ch.table('event_keys')} WHERE datasource_id = {ds:String}`,
      query_params: { ds: datasourceId },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ n: string | number }>();
    return Number(row?.n ?? 0);
  }

  /** The next page of stored ids' hashes in key order, after `after` (from the first id if null). */
  private async hashPage(datasourceId: string, after: string | null): Promise<{ lo: number[]; hi: number[]; last: string }> {
    const from = after === null ? '' : ' AND event_id > {after:String}';
    const result = await this.ch.client.query({
      query: `SELECT groupArray(toUInt32(bitAnd(h, 4294967295))) AS lo, groupArray(toUInt32(bitShiftRight(h, 32))) AS hi, max(event_id) AS last
        FROM (SELECT event_id, xxHash64(event_id) AS h FROM ${this.ch.table('event_keys')} WHERE datasource_id = {ds:String}${from} ORDER BY event_id LIMIT {page:UInt32})`,
      query_params: { ds: datasourceId, page: this.pageIds, ...(after === null ? {} : { after }) },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ lo: number[]; hi: number[]; last: string }>();
    return row ?? { lo: [], hi: [], last: '' };
  }
}
