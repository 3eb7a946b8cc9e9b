// Operations endpoints: /health (each engine up/down with round-trip ms; 503 when one is
// down) and /metrics (Prometheus text format).
import { Router } from 'express';
import { registry } from '../../infra/metrics';

export type EngineProbe = () => Promise<number>;

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
    res.status(up ? 200 : 503).json({ status: up ? 'up' : 'down', engines: report });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  });
  return router;
}
