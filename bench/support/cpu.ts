// CPU time of another process (user + system), read from /proc/<pid>/stat, for the benchmarks'
// "CPU per accepted message" figures. Linux only; undefined where /proc is not readable.
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ is 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * The role processes `pid` started (PROCESS_LAYOUT=split: children running main.ts with some
 * roles), found by their parent pid in /proc; empty for any other process.
 */
export function roleProcessPids(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      if (ppid === pid && /main\.(?:ts|js)\b/.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) found.push(Number(entry));
    } catch {
      // the process ended between the listing and the read
    }
  }
  return found;
}

/** The roles a role process runs, from its command line (`--role=worker` → `worker`). */
export function roleProcessName(pid: number): string {
  try {
    return /--role=([^\0]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1] ?? String(pid);
  } catch {
    return String(pid);
  }
}

/** CPU milliseconds used so far by `pid` and its role processes (and their finished, waited-for children). */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  const own = ownCpuMs(pid);
  if (own === undefined) return undefined;
  return roleProcessPids(pid).reduce((sum, child) => sum + (ownCpuMs(child) ?? 0), own);
}

/** CPU milliseconds used so far by `pid` alone (its own threads, not its children). */
export function ownCpuMs(pid: number): number | undefined {
  try {
    // Fields after the command name `(…)` (the last `) `: a name may hold one): state is field 3, utime 14, stime 15.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** Measures the CPU `pid` spends while `work` runs. */
export async function cpuDuring<T>(pid: number | undefined, work: () => Promise<T>): Promise<{ result: T; cpuMs: number | undefined }> {
  const before = processCpuMs(pid);
  const result = await work();
  const after = processCpuMs(pid);
  return { result, cpuMs: before === undefined || after === undefined ? undefined : after - before };
}

/** CPU milliseconds per thread name (comm) of `pid` so far: the JavaScript thread is `node`, others are libuv, V8 and native library threads. */
export function threadCpuMs(pid: number | undefined): Map<string, number> {
  const out = new Map<string, number>();
  if (pid === undefined) return out;
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\d-]+$/, '#');
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const ms = ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
      if (Number.isFinite(ms)) out.set(name, (out.get(name) ?? 0) + ms);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** Per-thread-name CPU between two threadCpuMs readings, largest first. */
export function threadCpuDelta(before: Map<string, number>, after: Map<string, number>): Array<[string, number]> {
  return [...after].map(([name, ms]): [string, number] => [name, ms - (before.get(name) ?? 0)]).filter(([, ms]) => ms > 0).sort((a, b) => b[1] - a[1]);
}
