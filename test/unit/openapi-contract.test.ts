// The OpenAPI document says what the server enforces (issue 14 item 9; spec 1 §9): the
// schemas' patterns agree with the validators on samples, and every documented response
// carries the rate-limit headers of spec 1 §8.
import { compile, parseUrl, SMS_FIELDS } from '../../core/filters/grammar-a';
import { isId, newId } from '../../core/ids';
import { checkSmsItem } from '../../core/sms/validate';
import { openApiDocument } from '../../core/schemas/openapi';

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
