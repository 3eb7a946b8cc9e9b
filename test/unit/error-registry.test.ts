// STYLE (fastify): one error registry (core/errors.ts) with stable codes; every code is
// documented (docs/errors.md) with its HTTP and SMPP statuses, and the OpenAPI document
// describes its error responses from the same registry the handlers answer from.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ERRORS, SMPP_STATUS, type ErrorCode } from '../../core/errors';
import { smsErrorFormat } from '../../gateways/http/errors';
import { openApiDocument } from '../../gateways/http/openapi';

const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'errors.md'), 'utf8');
const codes = Object.keys(ERRORS) as ErrorCode[];
const smppName = (value: number): string => Object.entries(SMPP_STATUS).find(([, v]) => v === value)?.[0] ?? '?';

describe('error registry (core/errors.ts)', () => {
  test.each(codes)('%s is documented in docs/errors.md with its HTTP and SMPP statuses', (code) => {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
    expect(row).toBeDefined();
    expect(row).toContain(`| ${ERRORS[code].status} ${ERRORS[code].title} |`);
    expect(row).toContain(`\`${smppName(ERRORS[code].smpp)}\``);
  });

  test('docs/errors.md lists no code the registry lacks', () => {
    const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual([...codes].sort());
  });

  test.each(codes)('the SMS API answers %s with the registry status', (code) => {
    expect(smsErrorFormat(new AppError(code, 'detail')).status).toBe(ERRORS[code].status);
  });

  test('every error response of the SMS API operations in the OpenAPI document is described from the registry', () => {
    type Operation = { servers?: unknown; responses?: Record<string, { description?: string }> };
    const paths = openApiDocument()['paths'] as Record<string, Record<string, Operation>>;
    let checked = 0;
    for (const operations of Object.values(paths)) {
      // Operations with servers of their own are the ingestion and audience APIs (their own error bodies).
      for (const operation of Object.values(operations).filter((o) => o.servers === undefined)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (Number(status) < 400) continue;
          // The console's codes (HTML pages) are not answered by the APIs.
          const expected = codes.filter((c) => ERRORS[c].status === Number(status) && !('console' in ERRORS[c]));
          expect(expected.length).toBeGreaterThan(0);
          for (const code of expected) expect(response.description).toContain(`${code}: ${ERRORS[code].description}`);
          checked += 1;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });
});
