// Batch inserts of the history writer (pipelines/history-writer.ts) and of the ingest writer
// (stores/audience-writer.ts). The history writer's rows go as JSONEachRow into
// a table of this database, with settings of their own on the in-process engine. Those are the
// statement's (`INSERT … SETTINGS … FORMAT`, through insertRaw): the chdb client connection
// would send them as `SET` statements, which stay on its session, where the user's reads run
// too. A server or another process's engine gets the rows without them: its threads are not
// this process's (the one setting passed so far is `os_thread_priority`, BACKGROUND_NICE).

import type { ClickHouse } from '../infra/clickhouse';

/** Settings of the insert statements on the in-process engine only. */
export type InProcessSettings = Readonly<Record<string, number>>;

/** `os_thread_priority = nice` (1-19) for the in-process engine's insert threads; none for 0. */
export function backgroundInsertSettings(nice: number): InProcessSettings | undefined {
  return nice > 0 ? { os_thread_priority: nice } : undefined;
}

/** Inserts `rows` into the table `name`; with `inProcess` settings through insertRaw where there is one. */
export async function insertJsonRows(ch: ClickHouse, name: string, rows: readonly object[], inProcess?: InProcessSettings): Promise<void> {
  if (rows.length === 0) return;
  if (inProcess && ch.insertRaw) {
    await ch.insertRaw(name, Buffer.from(rows.map((row) => JSON.stringify(row)).join('\n')), 'JSONEachRow', inProcess);
    return;
  }
  await ch.client.insert({ table: ch.table(name), values: rows, format: 'JSONEachRow' });
}

/**
 * Inserts `rows` (values in the order of `columns`) into the table `name` as JSONCompactEachRow
 * (measured about 1.5× JSONEachRow's insert rate on chdb), with `settings` on either engine. On
 * the in-process chdb the rows' text goes to its parser as bytes (insertRaw): through the
 * client, chdb's connection copies the body into a string and appends it to the statement's
 * SQL, which it then parses as one statement (docs/benchmarks.md, the ingest writer's raw
 * insert of 2026-11-26).
 */
export async function insertCompactRows(ch: ClickHouse, name: string, columns: readonly [string, ...string[]], rows: unknown[][], settings: Readonly<Record<string, number>> = {}): Promise<void> {
  if (rows.length === 0) return;
  if (ch.insertRaw) {
    let text = '';
    for (const row of rows) text += `${JSON.stringify(row)}\n`;
    await ch.insertRaw(name, Buffer.from(text), 'JSONCompactEachRow', settings, columns);
    return;
  }
  await ch.client.insert({ table: ch.table(name), values: rows, columns: [...columns], format: 'JSONCompactEachRow', clickhouse_settings: settings });
}

/** A row of insertRowHeads: its text without the last column (`[…,`), or, with `shared`, without the columns its batch shares: `shared.head` goes in front and `shared.mid` at `cut`. */
export interface RowHead {
  readonly row: Uint8Array;
  readonly version: number;
  readonly shared?: { readonly head: Uint8Array; readonly mid: Uint8Array } | null;
  readonly cut?: number;
}

/**
 * Inserts rows given as their JSONCompactEachRow text without the last column (as the ingest
 * gateway serialized them: core/ingest/event-rows.ts, the columns a frame's events share put in
 * here) and that column's number, which is appended here (`<version>]`). On the in-process chdb
 * the texts are copied into one buffer for its parser, none parsed or serialized again; a server
 * gets the rows through the client.
 */
export async function insertRowHeads(ch: ClickHouse, name: string, columns: readonly [string, ...string[]], rows: readonly RowHead[], settings: Readonly<Record<string, number>> = {}): Promise<void> {
  if (rows.length === 0) return;
  let size = 0;
  for (const { row, shared } of rows) size += row.length + 24 + (shared ? shared.head.length + shared.mid.length : 0); // a UInt64 has at most 20 digits, then `]\n`
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const { row, version, shared, cut } of rows) {
    if (shared) {
      // The row whole after the head, its tail moved on by the middle's length (copyWithin: no view made per row), the middle into the gap.
      const split = at + shared.head.length + (cut ?? row.length);
      out.set(shared.head, at);
      out.set(row, at + shared.head.length);
      const end = at + shared.head.length + row.length;
      out.copyWithin(split + shared.mid.length, split, end);
      out.set(shared.mid, split);
      at = end + shared.mid.length;
    } else {
      out.set(row, at);
      at += row.length;
    }
    at += out.write(`${version}]\n`, at, 'latin1');
  }
  if (ch.insertRaw) {
    await ch.insertRaw(name, out.subarray(0, at), 'JSONCompactEachRow', settings, columns);
    return;
  }
  await insertCompactRows(ch, name, columns, out.subarray(0, at - 1).toString('utf8').split('\n').map((line) => JSON.parse(line) as unknown[]), settings);
}
