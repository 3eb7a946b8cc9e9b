// CPU time of another process (user + system), read from /proc/<pid>/stat, for the benchmarks'
// "CPU per accepted message" figures. Linux only; undefined where /proc is not readable.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ is 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds used so far by `pid` and its finished, waited-for children. */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the command name `(…)`: state is field 3, utime 14, stime 15.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
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
