// The embedded ClickHouse's (chdb's) background threads at BACKGROUND_NICE, in the process that
// holds the in-process engine (under `npm start`: the gateways' process). Its merges and
// background schedule pools take 15-45 % of a core while the history writer inserts during a
// burst, at the gateways' priority; no request waits for them. ClickHouse starts those threads
// lazily (a pool grows, a table engine starts its own), so this process's threads are looked
// at again every few seconds (a listing of /proc/self/task and two small reads per thread) and
// the background ones found at a lower nice value are set to `nice` (infra/priority.ts
// isChdbBackgroundThread picks them by name; the query threads are left: user reads run there).
// A query-pool thread started from a lowered thread inherits its nice value; idle ones found
// lowered are set back to this process's priority where the system allows it (CAP_SYS_NICE).
import type { Logger } from './logger';
import { isChdbBackgroundThread, isChdbQueryPoolThread, lowerThreads, restoreThreads, threadNice } from './priority';

/** Between two looks at this process's threads. */
export const CHDB_BACKGROUND_SCAN_MS = 5_000;

export interface ChdbBackgroundNice {
  /** Looks at the threads now (after start-up, a test); how many it lowered. */
  scan(): number;
  stop(): Promise<void>;
}

export interface ChdbBackgroundNiceOptions {
  /** 1-19 (BACKGROUND_NICE). */
  readonly nice: number;
  readonly log: Logger;
  readonly everyMs?: number;
  /** The process whose threads are looked at (this one by default). */
  readonly pid?: number;
}

/**
 * Lowers chdb's background threads of this process to `nice` now and every `everyMs`. Where the
 * system refuses (a seccomp profile, a kernel without per-thread nice), it logs a warning once
 * and stops looking: those threads then run at the gateways' priority, as before.
 */
export function lowerChdbBackgroundThreads(options: ChdbBackgroundNiceOptions): ChdbBackgroundNice {
  const pid = options.pid ?? process.pid;
  let timer: NodeJS.Timeout | undefined;
  let failed = false;
  let mayRestore = true;
  const scan = (): number => {
    if (failed) return 0;
    try {
      const lowered = lowerThreads(pid, options.nice, isChdbBackgroundThread);
      if (lowered > 0) options.log.debug({ lowered, nice: options.nice }, 'embedded ClickHouse background threads lowered');
      const own = threadNice(pid, pid);
      if (mayRestore && own !== undefined) {
        const restored = restoreThreads(pid, own, isChdbQueryPoolThread);
        if (restored === 'not permitted') {
          mayRestore = false;
          options.log.debug('query-pool threads started from a lowered thread stay lowered (raising a priority needs CAP_SYS_NICE)');
        } else if (restored > 0) options.log.debug({ restored, nice: own }, 'embedded ClickHouse query-pool threads set back to the process priority');
      }
      return lowered;
    } catch (err) {
      failed = true;
      if (timer) clearInterval(timer);
      options.log.warn({ err, nice: options.nice }, 'could not lower the CPU priority of the embedded ClickHouse background threads; they run at the gateways\' priority');
      return 0;
    }
  };
  scan();
  if (!failed) {
    timer = setInterval(scan, options.everyMs ?? CHDB_BACKGROUND_SCAN_MS);
    timer.unref();
  }
  return {
    scan,
    stop: () => {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}
