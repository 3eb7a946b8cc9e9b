// The running test stack's /metrics, parsed; and a scrape repeated until a check holds. On the
// scale-out topology (TEST_TOPOLOGY=cluster) each role's counters live in its own process, so a
// scrape reads every process's /metrics, as Prometheus would, and labels each sample with its
// `instance`: sumOf then sums a counter over the processes that own it (the history writer runs
// in three), and a gauge only one process exports reads the same as on the embedded stack.
import { eventually } from '../../support/eventually';
import { parseExposition, type Exposition, type Sample } from './prometheus-text';
import { stack } from '../../support/stack';

async function scrapeOne(url: string): Promise<Exposition> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  return parseExposition(await res.text());
}

/** Several processes' expositions as one, each sample labelled with its process (`instance`). */
export function mergeExpositions(parts: ReadonlyArray<{ readonly instance: string; readonly exposition: Exposition }>): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const { instance, exposition } of parts) {
    for (const [name, type] of exposition.types) {
      const known = types.get(name);
      if (known !== undefined && known !== type) throw new Error(`${name} is a ${known} in one process and a ${type} in ${instance}`);
      types.set(name, type);
    }
    for (const s of exposition.samples) {
      if (s.labels['instance'] !== undefined) throw new Error(`${instance}: ${s.name} already has an instance label`);
      samples.push({ ...s, labels: { ...s.labels, instance } });
    }
  }
  return { types, samples };
}

export async function scrape(): Promise<Exposition> {
  const info = stack();
  const targets = info.metrics ?? [{ instance: 'product', url: `${info.httpUrl}/metrics` }];
  return mergeExpositions(await Promise.all(targets.map(async (t) => ({ instance: t.instance, exposition: await scrapeOne(t.url) }))));
}

/** Scrapes until `check` holds (it throws while it does not), up to `timeoutMs`; then its last error. */
export async function scrapeUntil(check: (exp: Exposition) => void, timeoutMs = 45_000): Promise<Exposition> {
  return eventually(async () => {
    const exp = await scrape();
    check(exp);
    return exp;
  }, { what: 'the scraped metrics to satisfy the check', timeoutMs, intervalMs: 400 });
}
