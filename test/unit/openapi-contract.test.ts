// The OpenAPI document says what the server enforces (issue 14 item 9; spec 1 §9): the
// schemas' patterns agree with the validators on samples, and every documented response
// carries the rate-limit headers of spec 1 §8.
import Ajv from 'ajv';
import { ERRORS } from '../../core/errors';
import { compile, parseUrl, SMS_FIELDS } from '../../core/filters/grammar-a';
import { parseSearch } from '../../core/filters/grammar-b';
import { MAX_BULK_ITEMS } from '../../core/sms/acceptance';
import { isId, newId } from '../../core/ids';
import { checkSmsItem } from '../../core/sms/validate';
import { openApiDocument } from '../../gateways/http/openapi';

interface Operation {
  parameters?: { name: string; schema: { pattern?: string; enum?: string[] } }[];
  responses: Record<string, { headers?: Record<string, { required?: boolean }> }>;
  requestBody?: unknown;
}
type Doc = { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, { properties: Record<string, { pattern?: string }> }> } };

const doc = openApiDocument() as unknown as Doc;
/** The SMS API's operations (spec 1); ingestion and audience operations have their own specs. */
const SMS_PATH = /^\/(sms|lookup|organization)(\/|$)/;
const operations = Object.entries(doc.paths).filter(([path]) => SMS_PATH.test(path)).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ path, method, op })));
const param = (path: string, method: string, name: string): { schema: { pattern?: string; enum?: string[] } } => {
  const found = doc.paths[path]?.[method]?.parameters?.find((p) => p.name === name);
  if (!found) throw new Error(`${method} ${path} has no parameter ${name}`);
  return found;
};
const accepted = (fn: () => unknown): boolean => {
  try { fn(); return true; } catch { return false; }
};

describe('issue 14 item 9: the OpenAPI document is as strict as the server', () => {
  test('path ids: the pattern accepts exactly what isId accepts (UUIDv7), on both /sms/{id} and /lookup/{id}', () => {
    const samples = [newId(), newId().toUpperCase(), '00000000-0000-4000-8000-000000000000', 'not-an-id', '', '%ff', `${newId()}x`, '0190a1b2-c3d4-7e5f-c012-3456789abcde'];
    for (const path of ['/sms/{id}', '/lookup/{id}', '/sms/{id}/dlrs']) {
      const pattern = new RegExp(param(path, 'get', 'id').schema.pattern ?? '');
      for (const id of samples) expect({ path, id, schema: pattern.test(id) }).toEqual({ path, id, schema: isId(id) });
    }
  });

  test('from, to: the schema patterns agree with the validator on boundary samples', () => {
    const from = new RegExp(doc.components.schemas['SmsCreateItem']?.properties['from']?.pattern ?? '');
    for (const value of ['ABC', 'AB', '   ', ' AB', 'AB ', 'My Shop', 'ABCDEFGHIJK', 'ABCDEFGHIJKL', '12345678901234', '123456789012345', '+4915112345']) {
      const server = checkSmsItem({ from: value, to: '+4915112345678', text: 'x' }).ok;
      expect({ value, schema: from.test(value) }).toEqual({ value, schema: server });
    }
  });

  test('_sort: the pattern accepts the sort keys the server takes and refuses the ones it refuses', () => {
    const pattern = new RegExp(param('/sms', 'get', '_sort').schema.pattern ?? '');
    for (const value of ['id', 'createdAt:-', 'status:+,id', ' id ', 'nosuch', '', 'id,', 'id:x', 'id;drop']) {
      const server = accepted(() => compile(parseUrl(new URLSearchParams({ _sort: value })), SMS_FIELDS));
      expect({ value, schema: pattern.test(value) }).toEqual({ value, schema: server });
    }
  });

  test('_group: the enum is what the server groups by', () => {
    for (const value of [...(param('/sms', 'get', '_group').schema.enum ?? []), 'weekly', 'nosuch']) {
      const server = accepted(() => compile(parseUrl(new URLSearchParams({ _group: value })), SMS_FIELDS));
      expect({ value, server }).toEqual({ value, server: value !== 'weekly' && value !== 'nosuch' });
    }
  });

  test('every SMS API operation with a body documents 415; every documented response requires the X-RateLimit-* headers (spec 1 §8)', () => {
    expect(operations.length).toBeGreaterThanOrEqual(11);
    for (const { path, method, op } of operations) {
      if (op.requestBody) expect({ path, method, has415: '415' in op.responses }).toEqual({ path, method, has415: true });
      for (const [status, response] of Object.entries(op.responses)) {
        for (const header of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
          expect({ path, method, status, header, required: response.headers?.[header]?.required }).toEqual({ path, method, status, header, required: true });
        }
      }
    }
  });
});

describe('the OpenAPI document and the server agree on the audience filter and the bulk (spec 3 §2.3, §9; spec 1 §8)', () => {
  // The document's own component schemas, as a client validating against /openapi.json would.
  const ajv = new Ajv({ strict: false, allErrors: false });
  ajv.addSchema({ $id: 'https://openapi.local/doc', components: doc.components });
  const documented = (name: string) => {
    const check = ajv.getSchema(`https://openapi.local/doc#/components/schemas/${name}`);
    if (!check) throw new Error(`no component ${name}`);
    return (value: unknown): boolean => check(value) as boolean;
  };
  const search = documented('AudienceSearch');
  const server = (body: unknown): boolean => accepted(() => parseSearch(body));
  const group = { type: 'group', join: 'and', children: [] };

  test.each([
    ['a filter without version (spec 3 §9)', { root: group }],
    ['a group carrying datasource (spec 3 §2.3: only group_event has it)', { version: '0.0.1', root: { ...group, datasource: ['ds1'] } }],
    ['an attribute_condition carrying children', { version: '0.0.1', root: { type: 'attribute_condition', key: '_email', operator: 'exists', values: [], children: [] } }],
    ['an aggregation named __proto__', JSON.parse('{"version":"0.0.1","limit":0,"aggregations":{"__proto__":{"type":"terms","params":{"field":"@_tags"}}}}') as unknown],
  ])('%s: the document refuses it, and so does the server', (_name, body) => {
    expect({ document: search(body), server: server(body) }).toEqual({ document: false, server: false });
  });

  test.each([
    ['a filter with version', { version: '0.0.1', root: group }],
    ['a group_event carrying datasource', { version: '0.0.1', root: { type: 'group_event', event: 'purchase', datasource: ['ds1'], children: [] } }],
    ['a cursor alone (no version: the filter comes from the cursor)', { cursor: 'abc' }],
  ])('%s: the document takes it, and so does the server', (_name, body) => {
    expect({ document: search(body), server: server(body) }).toEqual({ document: true, server: true });
  });

  test('a bulk of 101: the document refuses it (maxItems) and documents the 413 the server answers', () => {
    const bulk = doc.paths['/sms/bulk']?.['post'] as unknown as { requestBody: { content: Record<string, { schema: { $ref: string } }> }; responses: Record<string, { description?: string }> };
    const body = Array.from({ length: MAX_BULK_ITEMS + 1 }, () => ({ from: 'ABC', to: '+4915112345678', text: 'x' }));
    expect(documented('SmsBulk')(body)).toBe(false);
    expect(documented('SmsBulk')(body.slice(1))).toBe(true);
    expect(bulk.responses['413']?.description).toContain(`more than ${MAX_BULK_ITEMS} items`);
    expect(ERRORS.PAYLOAD_TOO_LARGE.status).toBe(413);
  });

  test('_q with _sort: every reserved parameter says it cannot be combined with _q, and the server refuses the pair (spec 3 §4.1 rule 9)', () => {
    for (const name of ['_sort', '_start', '_limit', '_group']) {
      const p = doc.paths['/sms']?.['get']?.parameters?.find((x) => x.name === name) as { description?: string } | undefined;
      expect({ name, says: p?.description?.includes('Cannot be combined with `_q` (400)') }).toEqual({ name, says: true });
    }
    expect(accepted(() => compile(parseUrl(new URLSearchParams({ _q: '{}', _sort: 'id' })), SMS_FIELDS))).toBe(false);
    expect(accepted(() => compile(parseUrl(new URLSearchParams({ _q: '{}' })), SMS_FIELDS))).toBe(true);
  });
});

describe('every path of the document resolves under a server of its own API', () => {
  type PathItem = { servers?: { url: string }[] } & Record<string, unknown>;
  const full = openApiDocument() as unknown as { servers: { url: string }[]; paths: Record<string, PathItem> };
  // What a generated client calls: the path item's servers, else the document's (many generators ignore operation-level servers).
  const base = (item: PathItem): string => (item.servers ?? full.servers)[0]?.url ?? '';
  const API_BASES: readonly [RegExp, string][] = [[/^\/project\/\{project\}\/datasource\//, '/ingest/v1'], [/^\/project\/\{project\}\/(audience|segments)/, '/audience/v1'], [/^\/(sms|lookup|organization|opt-outs)(\/|$)/, '/transactional/v1'], [/^\/sql$/, '/analytics/v1']];

  test('each path item carries the base its API is mounted on (gateways/http/app.ts)', () => {
    for (const [path, item] of Object.entries(full.paths)) {
      const expected = API_BASES.find(([pattern]) => pattern.test(path))?.[1];
      expect({ path, base: base(item) }).toEqual({ path, base: expected });
    }
  });

  test('configured base paths are the ones the document names', () => {
    const moved = openApiDocument({ ingest: '/in/v9', audience: '/aud/v9' }) as unknown as { paths: Record<string, PathItem> };
    expect(base(moved.paths['/project/{project}/datasource/{datasource}/stream'] as PathItem)).toBe('/in/v9');
    expect(base(moved.paths['/project/{project}/audience/search'] as PathItem)).toBe('/aud/v9');
  });
});
