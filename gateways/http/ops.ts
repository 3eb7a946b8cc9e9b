// Operations endpoints: /health (each engine up/down with round-trip ms; 503 when one is
// down; the details services of this process report, such as the ingest writer's lag) and
// /metrics (Prometheus text format).
import { Router } from 'express';
import { registry } from '../../infra/metrics';

export type EngineProbe = () => Promise<number>;

/**
 * Details /health shows beside the engines, by name, registered by the services of this
 * process (like the metrics registry, one per process): informational, they never make it 503.
 */
const healthDetails = new Map<string, () => unknown>();

export function reportInHealth(name: string, detail: () => unknown): void {
  healthDetails.set(name, detail);
}

const PROBE_TIMEOUT_MS = 2000;

async function probe(check: EngineProbe): Promise<{ status: 'up' | 'down'; rttMs?: number; error?: string }> {
  try {
    const rtt = await Promise.race([
      check(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS).unref()),
    ]);
    return { status: 'up', rttMs: Math.round(rtt * 100) / 100 };
  } catch (err) {
    return { status: 'down', error: err instanceof Error ? err.message : String(err) };
  }
}

export function opsRouter(engines: Record<string, EngineProbe>): Router {
  const router = Router();
  router.get('/health', async (_req, res) => {
    const names = Object.keys(engines);
    const results = await Promise.all(names.map((name) => probe(engines[name] as EngineProbe)));
    const report = Object.fromEntries(names.map((name, i) => [name, results[i]]));
    const up = results.every((r) => r.status === 'up');
    const details = Object.fromEntries([...healthDetails].map(([name, detail]) => [name, detail()]));
    res.status(up ? 200 : 503).json({ status: up ? 'up' : 'down', engines: report, ...details });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  });
  return router;
}
