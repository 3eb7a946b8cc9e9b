// The options of a benchmark script: node's parseArgs, plus `--help` (the options and their
// defaults) and a one-line error naming the unknown or malformed option instead of a stack trace.
import { basename } from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';

function usage(options: ParseArgsConfig['options']): string {
  const script = basename(process.argv[1] ?? 'bench');
  const lines = Object.entries(options ?? {}).map(([name, o]) => {
    const value = o.type === 'string' ? ' <value>' : '';
    const fallback = o.default === undefined ? '' : ` (default ${JSON.stringify(o.default)})`;
    return `  --${name}${value}${fallback}`;
  });
  return `usage: node --import tsx bench/${script} [options]\n${lines.join('\n')}`;
}

export function benchArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage(config.options));
    process.exit(0);
  }
  try {
    return parseArgs(config);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      console.error(`${(err as Error).message}\n${usage(config.options)}`);
      process.exit(2);
    }
    throw err;
  }
}
