// Fair share of the audience search between organizations (stores/search-fairness.ts; spec 3
// §4.2, docs/grammar-b.md "Fair share"): an organization is heavy when it is over its equal share
// of the recent cost while another one searches, never alone, never below the minimum cost; the
// cost decays with its half-life. The config knobs are validated (config/index.ts).
import { loadConfig } from '../../config';
import { searchFairness } from '../../roles/gateway-http';
import { heavySettings } from '../../stores/audience-search';
import { SearchCosts } from '../../stores/search-fairness';

const SETTINGS = { halfLifeSeconds: 10, activeSeconds: 10, minCostMs: 1000 };

function costs(settings = SETTINGS) {
  let now = 1_000_000;
  const c = new SearchCosts(settings, () => now);
  const run = (org: string, ms: number): void => { c.started(org); now += ms; c.finished(org, ms); };
  return { c, run, advance: (ms: number) => { now += ms; } };
}

describe('spec 3 §4.2 fair share: SearchCosts', () => {
  test('an organization alone is never heavy, however much it searches', () => {
    const { c, run } = costs();
    for (let i = 0; i < 20; i += 1) run('a', 3000);
    expect(c.cost('a')).toBeGreaterThan(10_000);
    expect(c.heavy('a')).toBe(false);
  });

  test('over its equal share while another organization searches: heavy; the other is not', () => {
    const { c, run } = costs();
    run('a', 3000);
    run('a', 3000);
    run('b', 100);
    expect(c.heavy('a')).toBe(true);
    expect(c.heavy('b')).toBe(false);
  });

  test('a statement still running makes its organization a searching one', () => {
    const { c, run, advance } = costs();
    run('a', 5000);
    advance(60_000); // b's last statement is long gone, and a's cost decayed to 5000 / 64
    c.started('b');
    advance(20_000); // b's statement has been running beyond activeSeconds
    run('a', 5000);
    expect(c.heavy('a')).toBe(true);
    c.finished('b', 25_000);
    advance(10_001);
    expect(c.heavy('a')).toBe(false);
  });

  test('below the minimum cost an organization is not heavy, even over its share', () => {
    const { c, run } = costs();
    run('a', 900);
    run('b', 10);
    expect(c.heavy('a')).toBe(false);
    run('a', 200);
    expect(c.heavy('a')).toBe(true);
  });

  test('the other organization stops searching: after activeSeconds, no longer heavy', () => {
    const { c, run, advance } = costs();
    run('b', 10);
    run('a', 5000);
    expect(c.heavy('a')).toBe(true);
    advance(10_001);
    expect(c.heavy('a')).toBe(false);
  });

  test('the cost halves every half-life; heavy ends once it is back under the minimum', () => {
    const { c, run, advance } = costs();
    run('a', 4000);
    expect(c.cost('a')).toBeCloseTo(4000, 6);
    advance(10_000);
    expect(c.cost('a')).toBeCloseTo(2000, 6);
    run('b', 1);
    expect(c.heavy('a')).toBe(true); // 2000 - a little decay over 1 ms: still ≥ 1000
    advance(9_000); // b still searching (within 10 s); a's cost 2000 / 2^0.9 ≈ 1072
    expect(c.heavy('a')).toBe(true);
    advance(2_000); // ≈ 933 < 1000, and b idle beyond 10 s
    expect(c.heavy('a')).toBe(false);
  });

  test('two heavy among three: each over a third of the cost, the light one not', () => {
    const { c, run } = costs();
    run('a', 4000);
    run('b', 4000);
    run('c', 100);
    expect([c.heavy('a'), c.heavy('b'), c.heavy('c')]).toEqual([true, true, false]);
  });

  test('equal costs: nobody is over the equal share', () => {
    const { c, run } = costs();
    run('a', 3000);
    run('b', 3000);
    // a's cost decayed over b's 3 s: just under b's.
    expect(c.heavy('a')).toBe(false);
  });

  test('settings out of range are refused', () => {
    expect(() => new SearchCosts({ ...SETTINGS, halfLifeSeconds: 0 })).toThrow(RangeError);
    expect(() => new SearchCosts({ ...SETTINGS, activeSeconds: -1 })).toThrow(RangeError);
    expect(() => new SearchCosts({ ...SETTINGS, minCostMs: -1 })).toThrow(RangeError);
  });
});

describe('spec 3 §4.2 fair share: settings', () => {
  test('heavy statements: os_thread_priority and max_threads when set, nothing when 0', () => {
    expect(heavySettings(19, 0)).toBe('os_thread_priority = 19');
    expect(heavySettings(10, 1)).toBe('os_thread_priority = 10, max_threads = 1');
    expect(heavySettings(0, 0)).toBe('');
    expect(() => heavySettings(20, 0)).toThrow(RangeError);
    expect(() => heavySettings(5, -1)).toThrow(RangeError);
  });

  test('defaults: on, half-life 10 s, active 10 s, minimum 2,000 ms, nice 19, threads unchanged', () => {
    expect(searchFairness(loadConfig({ AUDIENCE_FAIRNESS: 'false' }).audience.fairness)).toBeUndefined();
    const f = loadConfig({}).audience.fairness;
    expect(f).toEqual({ on: true, halfLifeSeconds: 10, activeSeconds: 10, minCostMs: 2000, heavyNice: 19, heavyMaxThreads: 0 });
    expect(searchFairness(f)?.heavySettings).toBe('os_thread_priority = 19');
  });

  test.each([
    ['AUDIENCE_COST_HALF_LIFE_SECONDS', '0', /AUDIENCE_COST_HALF_LIFE_SECONDS must be at least 1/],
    ['AUDIENCE_ACTIVE_SECONDS', '0', /AUDIENCE_ACTIVE_SECONDS must be at least 1/],
    ['AUDIENCE_HEAVY_MIN_COST_MS', '-1', /AUDIENCE_HEAVY_MIN_COST_MS must be at least 0/],
    ['AUDIENCE_HEAVY_NICE', '20', /AUDIENCE_HEAVY_NICE must be a nice value/],
    ['AUDIENCE_HEAVY_MAX_THREADS', '-2', /AUDIENCE_HEAVY_MAX_THREADS must be at least 0/],
    ['AUDIENCE_FAIRNESS', 'maybe', /AUDIENCE_FAIRNESS/],
  ])('%s=%s is refused at boot', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
