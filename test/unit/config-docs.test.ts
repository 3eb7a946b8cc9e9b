// STYLE (fastify): the configuration schema is the single source of the settings, and every
// setting it knows is documented in the README's configuration table.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_VARS } from '../../config';

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');

describe('configuration: every environment variable is documented', () => {
  test.each(ENV_VARS.map((v) => [v.name]))('%s has a row in the README', (name) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  });
});
