// The rollup job of the delivery statistics (migration 0015, stores/message-stats.ts
// StatsRollup): a pass every `everyMs` rolls the closed hours that are new or had a row arrive
// since their last roll, one pass at a time. Everything it needs is in ClickHouse, so a
// restart simply runs the next pass; two jobs at once only compute an hour twice (the newer
// generation is current). One per deployment, with the ingest writer (roles/pipelines.ts).
import type { Logger } from '../infra/logger';
import type { RollupPass } from '../stores/stats-rollup';

export interface StatsRollupJob {
  /** Runs a pass now (after the one running, if any). */
  runNow(): Promise<RollupPass>;
  stop(): Promise<void>;
}

export interface StatsRollupJobOptions {
  readonly rollup: { pass(): Promise<RollupPass> };
  /** Between the end of a pass and the start of the next; 60 s by default. */
  readonly everyMs?: number;
  readonly log: Logger;
}

export function startStatsRollup(options: StatsRollupJobOptions): StatsRollupJob {
  const everyMs = options.everyMs ?? 60_000;
  let running: Promise<RollupPass> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const runNow = (): Promise<RollupPass> => {
    const previous = running ?? Promise.resolve(undefined);
    const next = previous.catch(() => undefined).then(async () => {
      const started = performance.now();
      const result = await options.rollup.pass();
      if (result.hours > 0) {
        options.log.info({ hours: result.hours, waiting: result.waiting, ms: Math.round(performance.now() - started) }, 'stats rollup: hours rolled');
      }
      return result;
    });
    running = next;
    return next;
  };

  const schedule = (delayMs: number): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      runNow()
        // A pass with hours still waiting is followed at once by the next.
        .then((result) => schedule(result.waiting > 0 ? 0 : everyMs))
        .catch((err: unknown) => {
          options.log.warn({ err }, 'stats rollup: pass failed, retried after the interval');
          schedule(everyMs);
        });
    }, delayMs);
    timer.unref();
  };
  schedule(0);

  return {
    runNow,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
