// Spec 3 §4.2 fair share on ClickHouse (stores/search-fairness.ts, docs/grammar-b.md "Fair
// share"): the statements of an organization over its share while another one searches run on
// the engine's `heavy` read lane with the lower CPU priority in their own SETTINGS, and answer
// the same; the other organization's statements stay on the search lane without it; alone, the
// heavy organization is back on the search lane.
import type { ClickHouseClient } from '@clickhouse/client';
import { parseSearch } from '../../core/filters/grammar-b';
import type { ClickHouse } from '../../infra/clickhouse';
import { AudienceSearch, DEFAULT_CEILING, heavySettings, KEY_ORDER_PAGE_SETTINGS, type SearchScope } from '../../stores/audience-search';
import { SearchCosts } from '../../stores/search-fairness';
import { contact, contactRow } from '../support/audience-model';
import { openEmbeddedClickHouse, type EmbeddedClickHouse } from '../../support/embedded-clickhouse';

interface Statement { readonly lane: string; readonly query: string }

/** Statements of each lane running at once, and the most seen. */
const running = new Map<string, number>();
const mostRunning = new Map<string, number>();

let engine: EmbeddedClickHouse | undefined;
let search: AudienceSearch;
let plain: AudienceSearch;
let costs: SearchCosts;
let skew = 0;
const statements: Statement[] = [];
const scopeOf = (org: string, project: string): SearchScope => ({ project, org, timezone: 'UTC', now: new Date('2026-11-26T12:00:00Z') });
const A = scopeOf('org-a', 'pa');
const B = scopeOf('org-b', 'pb');

beforeAll(async () => {
  engine = await openEmbeddedClickHouse('audience_fairness');
  const ch = engine.ch;
  // Each lane's session, recording the statements it runs.
  const recording = (lane: string, client: ClickHouseClient): ClickHouseClient => new Proxy(client, {
    get(target, prop, receiver) {
      if (prop === 'query') {
        return async (params: { query: string }) => {
          statements.push({ lane, query: params.query });
          running.set(lane, (running.get(lane) ?? 0) + 1);
          mostRunning.set(lane, Math.max(mostRunning.get(lane) ?? 0, running.get(lane) ?? 0));
          try {
            return await target.query(params as Parameters<ClickHouseClient['query']>[0]);
          } finally {
            running.set(lane, (running.get(lane) ?? 1) - 1);
          }
        };
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
  const lanes = new Map<string, ClickHouseClient>();
  const recorded: ClickHouse = {
    ...ch,
    readLane: (name = 'search') => {
      const lane = lanes.get(name) ?? recording(name, ch.readLane?.(name) ?? ch.client);
      lanes.set(name, lane);
      return lane;
    },
  };
  const rows = ['pa', 'pb'].flatMap((project) => ['u1', 'u2', 'u3'].map((userId, i) => contactRow(contact({ userId, project, countryCode: i === 2 ? 'FR' : 'DE', clientTags: ['vip'] }))));
  await ch.client.insert({ table: ch.table('audience'), values: rows, format: 'JSONEachRow' });
  costs = new SearchCosts({ halfLifeSeconds: 10, activeSeconds: 10, minCostMs: 1000 }, () => Date.now() + skew);
  search = new AudienceSearch(recorded, { getRoot: async () => null }, Buffer.alloc(32, 4), DEFAULT_CEILING, { costs, heavySettings: heavySettings(19, 1) });
  plain = new AudienceSearch(ch, { getRoot: async () => null }, Buffer.alloc(32, 4));
}, 60_000);

afterAll(() => engine?.close());

const body = { version: '0.0.1', limit: 10, root: { type: 'attribute_condition', key: '_country_code', operator: 'matches-string', values: ['DE'] }, aggregations: { t: { type: 'terms', params: { field: '@_client_tags', size: 5 } } } };

async function run(scope: SearchScope): Promise<{ answer: unknown; statements: Statement[] }> {
  statements.length = 0;
  const answer = await search.search(parseSearch(body), scope);
  return { answer, statements: [...statements] };
}

describe('spec 3 §4.2 fair share between organizations', () => {
  test('org A over its share while org B searches: A on the heavy lane at the lower priority, B not; same answers', async () => {
    // A has had 5 s of statements in the last moments.
    costs.started('org-a');
    costs.finished('org-a', 5000);
    const aAlone = await run(A);
    expect(aAlone.statements.map((s) => s.lane)).toEqual(['search', 'search', 'search']);

    const b = await run(B);
    expect(b.statements).toHaveLength(3);
    for (const s of b.statements) {
      expect(s.lane).toBe('search');
      // The key-order page's own one-thread settings are every organization's (KEY_ORDER_PAGE_SETTINGS).
      expect(s.query.replace(`, ${KEY_ORDER_PAGE_SETTINGS}`, '')).not.toMatch(/os_thread_priority|max_threads/);
    }
    expect(b.answer).toEqual(await plain.search(parseSearch(body), B));

    const a = await run(A);
    expect(a.statements).toHaveLength(3);
    for (const s of a.statements) {
      expect(s.lane).toBe('heavy');
      expect(s.query).toMatch(/SETTINGS .*max_execution_time = 5.*, os_thread_priority = 19, max_threads = 1$/s);
    }
    expect(a.answer).toEqual(aAlone.answer);
    expect(a.answer).toEqual(await plain.search(parseSearch(body), A));
    expect(costs.heavy('org-b')).toBe(false);
  });

  test('a heavy organization has one statement in the engine at a time; a light one runs its page, total and aggregation together', async () => {
    costs.started('org-a');
    costs.finished('org-a', 5000);
    mostRunning.clear();
    await run(B);
    expect(mostRunning.get('search')).toBe(3); // page, total and aggregation together
    const [a1, a2] = await Promise.all([search.search(parseSearch(body), A), search.search(parseSearch(body), A)]);
    expect(mostRunning.get('heavy')).toBe(1);
    expect(a1).toEqual(a2);
  });

  test('B no longer searching (beyond AUDIENCE_ACTIVE_SECONDS): A back on the search lane', async () => {
    costs.started('org-a');
    costs.finished('org-a', 5000);
    await run(B);
    expect(costs.heavy('org-a')).toBe(true);
    skew += 10_001;
    const a = await run(A);
    expect(a.statements.map((s) => s.lane)).toEqual(['search', 'search', 'search']);
    expect(a.statements.every((s) => !s.query.includes('os_thread_priority'))).toBe(true);
  });
});
