// Lower CPU scheduling priority (a higher nice value) for the background processes of `npm start`:
// the lifecycle worker, the carrier process and the Temporal dev server yield the CPU to the
// gateways (and to nats-server, which acceptance publishes through) while both have work, and
// use all of it when the gateways are idle (BACKGROUND_NICE, docs/configuration.md).
// Two Linux details make a plain os.setPriority(pid) not enough:
// - It sets one thread (the one whose id is `pid`); threads take their creator's nice value only
//   when they are created, and Node and Go start theirs before the parent can act. So every
//   thread in /proc/<pid>/task is set, again until a pass finds none left to change: a thread
//   created afterwards is created by a thread already set, and inherits it.
// - With autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled) each session is weighed
//   as one group first, and nice values only count inside a group. A process that leads a
//   session of its own (the engines: spawned detached) gets its group's nice set as well
//   (/proc/<pid>/autogroup); a role process shares its parent's session, whose group is left
//   alone.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Highest nice value Linux allows (lowest priority). */
export const MAX_NICE = 19;

/** Passes over /proc/<pid>/task before giving up on threads that keep appearing unset. */
const MAX_PASSES = 10;

export class PriorityError extends Error {
  override readonly name = 'PriorityError';
}

/** Throws unless `nice` is a lowered priority this module sets (1-19). */
function checkNice(nice: number): void {
  if (!Number.isInteger(nice) || nice < 1 || nice > MAX_NICE) throw new PriorityError(`nice must be an integer from 1 to ${MAX_NICE}, got ${nice}`);
}

/**
 * Sets nice `nice` (1-19) on every thread of `pid`, and on its autogroup when `ownSession` and
 * `pid` leads its session. Never raises a priority: threads already at `nice` or above are left.
 * Throws (PriorityError, or the system error: EACCES, EPERM, ESRCH) when it could not.
 */
export function lowerPriority(pid: number, nice: number, options: { readonly ownSession: boolean }): void {
  checkNice(nice);
  const taskDir = `/proc/${pid}/task`;
  if (!existsSync(taskDir)) {
    // No /proc (not Linux): the one call there is.
    if (getPriority(pid) < nice) setPriority(pid, nice);
    return;
  }
  for (let pass = 0; pass < MAX_PASSES; pass += 1) {
    if (setThreads(pid, nice, (current) => current < nice) === 0) {
      if (options.ownSession) lowerAutogroup(pid, nice);
      return;
    }
  }
  throw new PriorityError(`threads of process ${pid} kept appearing at a lower nice value than ${nice} after ${MAX_PASSES} passes`);
}

/** The thread ids of `pid`; none once it has exited. */
function threadIds(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).map(Number).filter((t) => Number.isInteger(t) && t > 0);
  } catch {
    return [];
  }
}

/** Fields 3 and on of a /proc stat file (index 0 is field 3, the state); undefined once the process or thread is gone. */
function statFields(path: string): string[] | undefined {
  let stat: string;
  try { stat = readFileSync(path, 'utf8'); } catch { return undefined; }
  // After the command name `(…)`, which may hold spaces and parentheses.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Field 19 (nice) of /proc/<pid>/task/<tid>/stat; undefined once the thread is gone. */
export function threadNice(pid: number, tid: number): number | undefined {
  const nice = Number(statFields(`/proc/${pid}/task/${tid}/stat`)?.[16]);
  return Number.isInteger(nice) ? nice : undefined;
}

/** Every thread's nice value of `pid` (the tests and the benchmarks read them). */
export function threadNices(pid: number): number[] {
  return threadIds(pid).map((tid) => threadNice(pid, tid)).filter((n): n is number => n !== undefined);
}

/** The nice value of `pid`'s autogroup (/proc/<pid>/autogroup: "/autogroup-N nice K"); undefined without autogroup. */
export function autogroupNice(pid: number): number | undefined {
  try {
    const match = /nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Only for a session leader: its autogroup is its session's, holding nothing of this process. */
function lowerAutogroup(pid: number, nice: number): void {
  const current = autogroupNice(pid);
  if (current === undefined || current >= nice) return;
  // Field 6: the session id.
  const session = Number(statFields(`/proc/${pid}/stat`)?.[3]);
  if (session !== pid) throw new PriorityError(`process ${pid} does not lead its session (session ${session}): its autogroup is not its own to lower`);
  writeFileSync(`/proc/${pid}/autogroup`, String(nice));
}

/**
 * Threads of the embedded ClickHouse (chdb) that no request waits for, by the name ClickHouse
 * gives them (/proc/<pid>/task/<tid>/comm): the background merges and mutations (MergeMutate),
 * fetches and moves of parts, the common background executor, and the background schedule
 * pools (BgSchPool and its buffer, message-broker, distributed and streaming siblings, with
 * their delayed-execution threads, PoolDelayExec). Not listed, so never lowered: the query
 * threads (ThreadPool, QueryPipelineEx, …, shared by the user's reads: the writers lower theirs
 * per statement with `os_thread_priority`), MemoryWorker (ClickHouse runs it at -20 on purpose:
 * it keeps the memory accounting current; it uses a few milliseconds a second), and Node's own.
 */
const CHDB_BACKGROUND_THREADS = new Set([
  'MergeMutate', 'Fetch', 'Move', 'Common',
  'BgSchPool', 'BgBufSchPool', 'BgMBSchPool', 'BgDistSchPool', 'BgStrmSchPool', 'PoolDelayExec',
]);

/** Whether a thread of this name (its comm) is background work of chdb that no request waits for. */
export function isChdbBackgroundThread(comm: string): boolean {
  return CHDB_BACKGROUND_THREADS.has(comm.trim());
}

/**
 * Idle threads of ClickHouse's global query pool. A thread the pool starts takes the nice value
 * of the thread that needed it: one started from a lowered background thread, or from an insert
 * running at `os_thread_priority`, would stay lowered and serve the user's reads later. While a
 * query runs on one, it carries the query's own name (QueryPipelineEx, …): only idle ones are
 * named so (and the work of no query at a priority of its own).
 */
export function isChdbQueryPoolThread(comm: string): boolean {
  return comm.trim() === 'ThreadPool';
}

/**
 * Sets the threads of `pid` that `select` picks and that run at a higher nice value than
 * `nice` back to `nice`; returns how many, or 'not permitted' when the system refuses (raising a
 * priority needs CAP_SYS_NICE, which ClickHouse needs as well to apply os_thread_priority).
 */
export function restoreThreads(pid: number, nice: number, select: (name: string) => boolean): number | 'not permitted' {
  return setThreads(pid, nice, (current) => current > nice, select, 'report');
}

/** The name (comm) of thread `tid` of `pid`; undefined once it is gone. */
export function threadName(pid: number, tid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Sets nice `nice` (1-19) on the threads of `pid` whose name `select` picks and that run at a
 * lower nice value; returns how many it changed. The other threads are left as they are.
 * Throws as lowerPriority does (EACCES, EPERM); a thread that exits meanwhile is skipped.
 */
export function lowerThreads(pid: number, nice: number, select: (name: string) => boolean): number {
  checkNice(nice);
  return setThreads(pid, nice, (current) => current < nice, select) as number;
}

/**
 * Sets nice `nice` on each thread of `pid` that `select` picks by name (every thread without
 * it) and whose nice value `off` says is not what it should be; returns how many it changed. A
 * thread that exits meanwhile is skipped. A refusal (EACCES, EPERM) is thrown, or with `refused`
 * 'report' answered as 'not permitted'.
 */
function setThreads(pid: number, nice: number, off: (current: number) => boolean, select?: (name: string) => boolean, refused: 'throw' | 'report' = 'throw'): number | 'not permitted' {
  let changed = 0;
  for (const tid of threadIds(pid)) {
    if (select) {
      const name = threadName(pid, tid);
      if (name === undefined || !select(name)) continue;
    }
    const current = threadNice(pid, tid);
    if (current === undefined || !off(current)) continue;
    try {
      setPriority(tid, nice);
      changed += 1;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (refused === 'report' && (code === 'EACCES' || code === 'EPERM')) return 'not permitted';
      // The thread exited between the listing and the call.
      if (code === 'ESRCH' && threadNice(pid, tid) === undefined) continue;
      throw err;
    }
  }
  return changed;
}
