// The accounts entry (core/accounts/index.ts) is imported for its secrets, rate grants and token
// kinds by the SMPP gateway, the stores, the pipelines and the admin CLI on every call; the admin
// API's body validators (core/accounts/admin-body.ts) are compiled on the first body checked, as
// core/bus/decode.ts compiles its payload validators, not when the entry is loaded.
import type Ajv from 'ajv';

describe('core/accounts entry: admin body validators compiled on first use', () => {
  afterEach(() => jest.restoreAllMocks());

  it('loading the entry compiles no schema; the first body of a kind compiles its schema once', () => {
    jest.isolateModules(() => {
      // The registry of this isolated load: the entry below gets the same ajv.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const compile = jest.spyOn((require('ajv') as { default: typeof Ajv }).default.prototype, 'compile');
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const accounts = require('../../core/accounts') as typeof import('../../core/accounts');
      expect(compile).not.toHaveBeenCalled();
      expect(accounts.parseAdminBody('AdminProjectCreate', { name: 'p' })).toEqual({ name: 'p' });
      expect(compile).toHaveBeenCalledTimes(1);
      expect(() => accounts.parseAdminBody('AdminProjectCreate', { name: '' })).toThrow();
      expect(compile).toHaveBeenCalledTimes(1);
    });
  });
});
