// STYLE (fastify): the configuration schema is the single source of the settings, and every
// setting it knows is documented in the configuration table of docs/configuration.md.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_VARS } from '../../config';

const readme = readFileSync(join(__dirname, '..', '..', 'docs', 'configuration.md'), 'utf8');

describe('configuration: every environment variable is documented', () => {
  test.each(ENV_VARS.map((v) => [v.name]))('%s has a row in docs/configuration.md', (name) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${name}\` \\|`, 'm'));
  });
});
