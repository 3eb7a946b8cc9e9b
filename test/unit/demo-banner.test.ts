// The start banner's demo section (pipelines/demo-seed.ts demoBanner): the shell lines it prints
// read demo.json from the path the stack actually uses (DATA_DIR may be anything, not ./data),
// and they work when pasted into a shell, even for a path with spaces and quotes.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoBanner, shellQuote, type DemoCredentials } from '../../pipelines/demo-seed';

const demo: DemoCredentials = {
  organization: 'org_1', project: 'prj_1', token: 'tok-api-sms', tokenId: 'tk_1', legacyToken: 'tok-legacy',
  smpp: { systemId: 'sys', password: 'pw' }, currency: 'EUR', createdAt: '2025-11-26T10:00:00.000Z',
  ingest: { project: 'prj_1', datasource: 'ds_1', token: 'tok-ingest' },
};

let dir: string;
beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'demo-banner-')); });
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The banner's `NAME=$(...)` lines, pasted into sh, then the variables printed. */
function pasteIntoShell(banner: string, cwd: string): Record<string, string> {
  const lines = banner.split('\n').map((l) => l.trim()).filter((l) => /^[A-Z]+=\$\(node /.test(l));
  const script = [...lines, 'printf "%s\\n" "$TOKEN" "$I" "$IT"'].join('\n');
  const [TOKEN, I, IT] = execFileSync('sh', ['-c', script], { cwd, encoding: 'utf8' }).split('\n');
  return { TOKEN: TOKEN ?? '', I: I ?? '', IT: IT ?? '', lines: String(lines.length) };
}

describe('demoBanner: ready-to-paste shell lines with the actual demo.json path', () => {
  test('a DATA_DIR other than ./data (with a space and a quote in it), pasted from another directory: $TOKEN, $I and $IT are the demo\'s', () => {
    const dataDir = join(dir, "my 'stack' data");
    mkdirSync(dataDir);
    const file = join(dataDir, 'demo.json');
    writeFileSync(file, JSON.stringify(demo));
    const banner = demoBanner(demo, 9080, file, '/ingest/v1');
    expect(banner).toContain(`(read from ${file})`);
    expect(pasteIntoShell(banner, tmpdir())).toEqual({ TOKEN: 'tok-api-sms', I: '/ingest/v1/project/prj_1/datasource/ds_1/stream', IT: 'tok-ingest', lines: '3' });
  });

  test('no ingest credentials yet: only $TOKEN', () => {
    const file = join(dir, 'demo.json');
    const { ingest: _ingest, ...older } = demo;
    writeFileSync(file, JSON.stringify(older));
    expect(pasteIntoShell(demoBanner(older, 8080, file), dir)).toEqual({ TOKEN: 'tok-api-sms', I: '', IT: '', lines: '1' });
  });

  test('shellQuote: one word for any text', () => {
    for (const text of ["it's", 'a b', '$HOME', '`x`', '"q"', "''", '']) {
      expect(execFileSync('sh', ['-c', `printf %s ${shellQuote(text)}`], { encoding: 'utf8' })).toBe(text);
    }
  });
});
