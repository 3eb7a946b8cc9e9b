// Reading what /metrics says, for the metrics suites: the Prometheus text exposition parsed into
// samples, the metric names a PromQL expression reads, and the label values that look like an
// id (an organization, token, message or phone number must never be a label).

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Exposition {
  /** `# TYPE` of each family. */
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice('# TYPE '.length).split(' ');
      if (name && type) types.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sumOf(exp: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exp.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/**
 * The largest per-process sum of `name` (samples grouped by their `instance` label): how a gauge
 * that one process per deployment computes from shared state is read (`max`, docs/metrics.md),
 * so that it would not count twice if two processes exported it.
 */
export function maxOf(exp: Exposition, name: string, labels: Record<string, string> = {}): number {
  const perInstance = new Map<string, number>();
  for (const s of exp.samples) {
    if (s.name !== name || !Object.entries(labels).every(([k, v]) => s.labels[k] === v)) continue;
    const instance = s.labels['instance'] ?? '';
    perInstance.set(instance, (perInstance.get(instance) ?? 0) + s.value);
  }
  return perInstance.size === 0 ? 0 : Math.max(...perInstance.values());
}

const HISTOGRAM_SUFFIXES = ['_bucket', '_sum', '_count'];

/** Whether the exposition declares `name`: a family, or a histogram's or summary's series. */
export function isExported(exp: Exposition, name: string): boolean {
  if (exp.types.has(name) || exp.samples.some((s) => s.name === name)) return true;
  const suffix = HISTOGRAM_SUFFIXES.find((s) => name.endsWith(s));
  if (!suffix) return false;
  const type = exp.types.get(name.slice(0, -suffix.length));
  return type === 'histogram' || (type === 'summary' && suffix !== '_bucket');
}

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names a PromQL expression reads (not its functions, label names, values or keywords). */
export function metricNamesOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = bare.slice((m.index ?? 0) + m[0].length).trimStart();
    const before = bare[(m.index ?? 0) - 1] ?? '';
    if (after.startsWith('(') || PROMQL_WORDS.has(m[0].toLowerCase()) || /[0-9.]/.test(before)) continue;
    names.add(m[0]);
  }
  return [...names];
}

const ID_LIKE: ReadonlyArray<[string, RegExp]> = [
  ['a UUID', /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i],
  ['a long hex string', /^[0-9a-f]{16,}$/i],
  ['a phone number or long digit string', /^\+?\d{7,}$/],
  ['a random token-like string', /^(?=.*\d)(?=.*[a-z])(?=.*[A-Z])[A-Za-z0-9_-]{20,}$/],
];

/** `metric{label="value"}: why` for every label value that looks like an id. */
export function idLikeLabels(exp: Exposition): string[] {
  const problems = new Set<string>();
  for (const s of exp.samples) {
    for (const [label, value] of Object.entries(s.labels)) {
      const hit = ID_LIKE.find(([, re]) => re.test(value));
      if (hit) problems.add(`${s.name}{${label}="${value}"}: ${hit[0]}`);
    }
  }
  return [...problems];
}

/** Distinct label sets per metric family (histogram buckets and quantiles folded together). */
export function seriesPerFamily(exp: Exposition): Map<string, number> {
  const sets = new Map<string, Set<string>>();
  for (const s of exp.samples) {
    const suffix = HISTOGRAM_SUFFIXES.find((x) => s.name.endsWith(x));
    const family = suffix && exp.types.has(s.name.slice(0, -suffix.length)) ? s.name.slice(0, -suffix.length) : s.name;
    const key = Object.entries(s.labels).filter(([k]) => k !== 'le' && k !== 'quantile').sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k}=${v}`).join(',');
    const set = sets.get(family) ?? new Set<string>();
    set.add(key);
    sets.set(family, set);
  }
  return new Map([...sets].map(([family, set]) => [family, set.size]));
}

/** Distinct values of each label per metric family, as `family{label}` → count (histogram `le` and `quantile` left out). */
export function valuesPerLabel(exp: Exposition): Map<string, number> {
  const values = new Map<string, Set<string>>();
  for (const s of exp.samples) {
    const suffix = HISTOGRAM_SUFFIXES.find((x) => s.name.endsWith(x));
    const family = suffix && exp.types.has(s.name.slice(0, -suffix.length)) ? s.name.slice(0, -suffix.length) : s.name;
    for (const [label, value] of Object.entries(s.labels)) {
      if (label === 'le' || label === 'quantile') continue;
      const key = `${family}{${label}}`;
      const set = values.get(key) ?? new Set<string>();
      set.add(value);
      values.set(key, set);
    }
  }
  return new Map([...values].map(([key, set]) => [key, set.size]));
}

/** Every `expr` of a Grafana dashboard (panels, nested rows). */
export function dashboardExpressions(dashboard: unknown): string[] {
  const exprs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === 'expr' && typeof value === 'string') exprs.push(value);
        else walk(value);
      }
    }
  };
  walk(dashboard);
  return exprs;
}
