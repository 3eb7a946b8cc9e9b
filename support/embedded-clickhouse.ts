// The embedded ClickHouse (chdb) of one test file: a data directory of its own, the product's
// migrations applied (unless `migrated: false`), and a close that removes the directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openClickHouse, type ClickHouse } from '../infra/clickhouse';
import { createLogger } from '../infra/logger';

export interface EmbeddedClickHouse {
  readonly ch: ClickHouse;
  readonly dir: string;
  /** Closes the engine and removes its data directory. */
  close(): Promise<void>;
}

export async function openEmbeddedClickHouse(database: string, options: { migrated?: boolean } = {}): Promise<EmbeddedClickHouse> {
  const dir = mkdtempSync(join(tmpdir(), `chdb-${database}-`));
  const ch = await openClickHouse({ url: undefined, user: 'default', password: '', database, embeddedPath: dir });
  if (options.migrated !== false) await migrate(ch, createLogger('warn'));
  return {
    ch, dir,
    close: async () => {
      await ch.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
