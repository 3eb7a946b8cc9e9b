// docs/errors.md: every error status comes from the error registry (core/errors.ts). The console's
// error pages read theirs from it too, so no console module writes an error status as a number.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const DIR = join(__dirname, '../../gateways/http/console');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('console error statuses come from the error registry', () => {
  test('no console module writes an error status (4xx/5xx) as a literal', () => {
    const found = files(DIR).flatMap((f) =>
      readFileSync(f, 'utf8').split('\n').flatMap((line, i) => (/\bstatus\s*(?::|===|!==|\()\s*[45]\d\d\b/.test(line) ? [`${f.slice(DIR.length + 1)}:${i + 1}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
