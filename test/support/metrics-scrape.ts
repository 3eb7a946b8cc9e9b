// The running test stack's /metrics, parsed; and a scrape repeated until a check holds.
import { parseExposition, type Exposition } from './prometheus-text';
import { stack } from './stack';

export async function scrape(): Promise<Exposition> {
  const res = await fetch(`${stack().httpUrl}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return parseExposition(await res.text());
}

/** Scrapes until `check` holds (it throws while it does not), up to `timeoutMs`; then its last error. */
export async function scrapeUntil(check: (exp: Exposition) => void, timeoutMs = 45_000): Promise<Exposition> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exp = await scrape();
    try {
      check(exp);
      return exp;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
  }
}
