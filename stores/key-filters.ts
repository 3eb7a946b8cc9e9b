// The keys a table holds per scope (event ids per datasource in event_keys, contacts per project in
// ds_contacts), as in-memory filters (core/ingest/key-filter.ts) that the ingest writer asks
// before it reads the table: a key a filter rules out has no row, certainly, so the writer skips
// the statement for it. Without them each run's lookup grows with what the scope has stored, since
// random keys each touch their own granule (docs/ingestion.md "Lookups before a run").
//
// A filter must hold every key of its scope in the table. It is built once per scope and process
// from the table (the keys' hashes read in key order, a page at a time, beside the writer's runs)
// while the writer records each key it is about to insert, from the moment the build starts; until
// the build ends, the scope's keys are looked up in the table. The ingest writer is the only
// writer of these tables (one per deployment: docs/ingestion.md), so nothing adds keys behind the
// filter's back. Keys whose rows are deleted stay in the filter: a false positive, which the
// table answers.
import { KeyFilter, keyHash, type KeyHash } from '../core/ingest';
import type { ClickHouse } from '../infra/clickhouse';
import type { Logger } from '../infra/logger';
import { ingestKeyFilterBytes, ingestKeyFilterChecks } from '../infra/metrics';

/** A table's key column within a scope column, both leading its sorting key. */
export interface KeyTable {
  /** What the keys are, for logs and metrics. */
  readonly name: 'event_ids' | 'contacts';
  readonly table: string;
  readonly scope: string;
  readonly key: string;
}

export const EVENT_KEYS: KeyTable = { name: 'event_ids', table: 'event_keys', scope: 'datasource_id', key: 'event_id' };
export const CONTACT_KEYS: KeyTable = { name: 'contacts', table: 'ds_contacts', scope: 'project_id', key: 'user_id' };

/** The memory all filters share (INGEST_KEY_FILTER_MB). */
export class KeyFilterMemory {
  private readonly members = new Set<StoredKeys>();

  constructor(readonly budgetBytes: number) {}

  join(member: StoredKeys): void {
    this.members.add(member);
  }

  usedBytes(): number {
    let bytes = 0;
    for (const member of this.members) bytes += member.bytes();
    return bytes;
  }
}

type FilterState =
  | { readonly kind: 'building'; filter: KeyFilter | null; readonly early: KeyHash[]; readonly built: Promise<void> }
  | { readonly kind: 'ready'; readonly filter: KeyFilter }
  | { readonly kind: 'off' };

const PAGE_KEYS = 100_000;

export class StoredKeys {
  private readonly filters = new Map<string, FilterState>();
  private readonly pageKeys: number;

  constructor(
    private readonly ch: ClickHouse,
    private readonly source: KeyTable,
    private readonly memory: KeyFilterMemory,
    private readonly log: Logger,
    options: { readonly pageKeys?: number } = {},
  ) {
    this.pageKeys = options.pageKeys ?? PAGE_KEYS;
    memory.join(this);
  }

  /** False: the scope has no row with this key, certainly. True: it may have one (or its filter is not ready). */
  private mayHold(scope: string, key: string): boolean {
    const state = this.stateOf(scope);
    return state.kind !== 'ready' || state.filter.mightHold(keyHash(key));
  }

  /** Of these keys of one scope, the ones the table must be asked about; counts both answers. */
  toLookUp<T>(items: readonly T[], scope: (item: T) => string, key: (item: T) => string): T[] {
    const left = items.filter((item) => this.mayHold(scope(item), key(item)));
    const ruledOut = items.length - left.length;
    if (ruledOut > 0) ingestKeyFilterChecks.inc({ keys: this.source.name, answered_by: 'filter' }, ruledOut);
    if (left.length > 0) ingestKeyFilterChecks.inc({ keys: this.source.name, answered_by: 'table' }, left.length);
    return left;
  }

  /** Records a key about to be inserted: call before the insert. */
  record(scope: string, key: string): void {
    const state = this.filters.get(scope);
    if (!state || state.kind === 'off') return;
    const hash = keyHash(key);
    if (state.kind === 'building' && !state.filter) state.early.push(hash);
    else if (this.makeRoom(scope, state.filter as KeyFilter)) (state.filter as KeyFilter).add(hash);
  }

  /** Where a scope's filter stands (for tests and logs). */
  status(scope: string): FilterState['kind'] | 'none' {
    return this.filters.get(scope)?.kind ?? 'none';
  }

  /** Resolves when the scope's filter build has ended (ready or off); at once if none runs. */
  async settled(scope: string): Promise<void> {
    const state = this.filters.get(scope);
    if (state?.kind === 'building') await state.built;
  }

  /** Memory of this table's filters. */
  bytes(): number {
    let bytes = 0;
    for (const state of this.filters.values()) if (state.kind !== 'off' && state.filter) bytes += state.filter.bytes;
    return bytes;
  }

  private stateOf(scope: string): FilterState {
    const known = this.filters.get(scope);
    if (known) return known;
    if (this.memory.budgetBytes <= 0) {
      const off: FilterState = { kind: 'off' };
      this.filters.set(scope, off);
      return off;
    }
    let resolve = (): void => {};
    const state: Extract<FilterState, { kind: 'building' }> = { kind: 'building', filter: null, early: [], built: new Promise<void>((r) => { resolve = r; }) };
    // Registered before the build's first statement, so every key recorded from now on reaches the filter.
    this.filters.set(scope, state);
    void this.build(scope, state).catch((err: unknown) => {
      this.log.warn({ err, keys: this.source.name, scope }, 'ingest writer: building a key filter failed; this scope\'s keys are looked up in the table');
      this.turnOff(scope);
    }).finally(resolve);
    return state;
  }

  private async build(scope: string, state: Extract<FilterState, { kind: 'building' }>): Promise<void> {
    const started = performance.now();
    const rows = await this.countRows(scope);
    const filter = new KeyFilter(rows + Math.ceil(rows / 4));
    if (this.memory.usedBytes() + filter.bytes > this.memory.budgetBytes) {
      this.log.warn({ keys: this.source.name, scope, rows, filterBytes: filter.bytes, budgetBytes: this.memory.budgetBytes }, 'ingest writer: no room for this scope\'s key filter (INGEST_KEY_FILTER_MB); its keys are looked up in the table');
      this.turnOff(scope);
      return;
    }
    state.filter = filter;
    for (const hash of state.early.splice(0)) filter.add(hash);
    this.updateBytes();
    let after: string | null = null;
    for (;;) {
      const page = await this.hashPage(scope, after);
      if (this.filters.get(scope) !== state) return; // turned off meanwhile
      const { lo, hi } = page;
      for (let i = 0; i < lo.length; i += 1) {
        if (filter.growthBytes > 0 && !this.makeRoom(scope, filter)) return;
        filter.addHalves(lo[i] as number, hi[i] as number);
      }
      if (lo.length < this.pageKeys) break;
      after = page.last;
    }
    this.filters.set(scope, { kind: 'ready', filter });
    this.log.info({ keys: this.source.name, scope, added: filter.count, filterBytes: filter.bytes, ms: Math.round(performance.now() - started) }, 'ingest writer: key filter ready');
  }

  /** Whether the filter may take its next key within the budget; turns the scope off if not. */
  private makeRoom(scope: string, filter: KeyFilter): boolean {
    const growth = filter.growthBytes;
    if (growth === 0 || this.memory.usedBytes() + growth <= this.memory.budgetBytes) {
      if (growth > 0) queueMicrotask(() => this.updateBytes());
      return true;
    }
    this.log.warn({ keys: this.source.name, scope, added: filter.count, filterBytes: filter.bytes, budgetBytes: this.memory.budgetBytes }, 'ingest writer: a key filter outgrew INGEST_KEY_FILTER_MB; this scope\'s keys are looked up in the table');
    this.turnOff(scope);
    return false;
  }

  private turnOff(scope: string): void {
    this.filters.set(scope, { kind: 'off' });
    this.updateBytes();
  }

  private updateBytes(): void {
    ingestKeyFilterBytes.set({ keys: this.source.name }, this.bytes());
  }

  private async countRows(scope: string): Promise<number> {
    const result = await this.ch.client.query({
      query: `SELECT count() AS n FROM ${this.ch.table(this.source.table)} WHERE ${this.source.scope} = {scope:String}`,
      query_params: { scope },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ n: string | number }>();
    return Number(row?.n ?? 0);
  }

  /** The next page of the scope's keys' hashes in key order, after `after` (from the first key if null). */
  private async hashPage(scope: string, after: string | null): Promise<{ lo: number[]; hi: number[]; last: string }> {
    const { table, key } = this.source;
    const from = after === null ? '' : ` AND ${key} > {after:String}`;
    const result = await this.ch.client.query({
      query: `SELECT groupArray(toUInt32(bitAnd(h, 4294967295))) AS lo, groupArray(toUInt32(bitShiftRight(h, 32))) AS hi, max(k) AS last
        FROM (SELECT ${key} AS k, xxHash64(${key}) AS h FROM ${this.ch.table(table)} WHERE ${this.source.scope} = {scope:String}${from} ORDER BY ${key} LIMIT {page:UInt32})`,
      query_params: { scope, page: this.pageKeys, ...(after === null ? {} : { after }) },
      format: 'JSONEachRow',
    });
    const [row] = await result.json<{ lo: number[]; hi: number[]; last: string }>();
    return row ?? { lo: [], hi: [], last: '' };
  }
}
