// What Temporal costs a lifecycle run: CPU of the dev server process and of the product's
// threads (from /proc, Linux), and history events of every workflow execution in the namespace.
import { readdirSync, readFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { processCpuMs, roleProcessName, roleProcessPids } from './cpu';

const TICKS_PER_SECOND = 100;

function cpuSecondsOf(statPath: string): number {
  const fields = readFileSync(statPath, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** CPU seconds of a process, or of each of its threads grouped by thread name. */
export function processCpuSeconds(pid: number): number {
  return (processCpuMs(pid) ?? 0) / 1000;
}

/** Per thread name; the threads of role processes (PROCESS_LAYOUT=split) are named `<roles>/<thread>`. */
export function threadCpuSeconds(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const owner of [pid, ...roleProcessPids(pid)]) {
    const prefix = owner === pid ? '' : `${roleProcessName(owner)}/`;
    for (const tid of readdirSync(`/proc/${owner}/task`)) {
      try {
        const comm = readFileSync(`/proc/${owner}/task/${tid}/comm`, 'utf8').trim();
        // Worker threads (the SDK's workflow threads) share the process's name; the main thread is the pid.
        const name = prefix + (tid === String(owner) ? 'main' : comm === 'node' ? 'node-worker-thread' : comm);
        byName.set(name, (byName.get(name) ?? 0) + cpuSecondsOf(`/proc/${owner}/task/${tid}/stat`));
      } catch {
        // the thread ended between the listing and the read
      }
    }
  }
  return byName;
}

/** The pid of the Temporal dev server listening on `port` (its command line names the port). */
export function temporalServerPid(port: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args[0]?.endsWith('temporal') && args.includes('start-dev') && args.some((a, i) => (a === '--port' || a === '-p') && args[i + 1] === port)) return Number(entry);
    } catch {
      // gone
    }
  }
  return undefined;
}

/** Executions (runs) and their history events per workflow type, from the visibility store. */
export async function historyEvents(client: Client): Promise<Record<string, { runs: number; events: number }>> {
  const byType: Record<string, { runs: number; events: number }> = {};
  for await (const info of client.workflow.list()) {
    const entry = byType[info.type] ?? { runs: 0, events: 0 };
    entry.runs += 1;
    entry.events += info.historyLength;
    byType[info.type] = entry;
  }
  return byType;
}

/** The execution with the longest history, and its events counted by type: where the events per message go. */
export async function longestHistory(client: Client): Promise<{ workflowId: string; runId: string; events: number; byEventType: Record<string, number> } | null> {
  let longest: { workflowId: string; runId: string; events: number } | null = null;
  for await (const info of client.workflow.list()) {
    if (!longest || info.historyLength > longest.events) longest = { workflowId: info.workflowId, runId: info.runId, events: info.historyLength };
  }
  if (!longest) return null;
  const history = await client.workflow.getHandle(longest.workflowId, longest.runId).fetchHistory();
  const byEventType: Record<string, number> = {};
  for (const event of history.events ?? []) {
    const name = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType);
    byEventType[name] = (byEventType[name] ?? 0) + 1;
  }
  return { ...longest, byEventType };
}

/**
 * The SDK's part of the product: Temporal core (Rust, tokio) threads and the Node worker threads
 * that run workflow code, in the process that runs the worker role. Activities, the bridge and
 * the client run on the main thread with everything else, so they are not counted here (the
 * product's whole CPU is reported beside). Every Node process also has a module-loader thread
 * (`--import tsx`), named like a worker thread: with role processes (names `<roles>/<thread>`,
 * threadCpuSeconds) only the worker process's count.
 */
export function isTemporalSdkThread(name: string, withRoleProcesses: boolean): boolean {
  const slash = name.lastIndexOf('/');
  const thread = name.slice(slash + 1);
  if (/tokio/i.test(thread)) return true;
  if (thread !== 'node-worker-thread') return false;
  return withRoleProcesses ? name.slice(0, Math.max(0, slash)).split(',').includes('worker') : true;
}
