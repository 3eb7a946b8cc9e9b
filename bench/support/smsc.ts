// A standalone SMSC for the benchmarks that compare the product with another SMS gateway
// (bench/kannel-vs-product.ts): the product's own carrier simulator (gateways/carrier/simulator.ts,
// docs/carrier.md) in a process of its own, so that both gateways submit to the same SMSC and its
// CPU is counted apart from theirs. It answers every submit_sm at once and sends the receipts of
// the destination's path (ENROUTE then DELIVRD for a number not ending in 89-98) after
// --latency ms each. Prints one JSON line `{"port":N}` on stdout once listening; stops on SIGTERM.
// Usage: node --import tsx bench/support/smsc.ts [--port 0] [--latency 0] [--system-id connector] [--password simulatr]
import { benchArgs } from '../cli-args';
import { startCarrierSimulator } from '../../roles/carrier-simulator';
import { createLogger } from '../../infra/logger';

const { values } = benchArgs({
  options: {
    port: { type: 'string', default: '0' },
    latency: { type: 'string', default: '0' },
    'system-id': { type: 'string', default: 'connector' },
    password: { type: 'string', default: 'simulatr' },
  },
});

async function main(): Promise<void> {
  const simulator = await startCarrierSimulator({
    port: Number(values.port), host: '127.0.0.1', latencyMs: Number(values.latency),
    systemId: values['system-id'], password: values.password, log: createLogger(process.env['LOG_LEVEL'] ?? 'warn', { component: 'bench-smsc' }),
  });
  process.stdout.write(`${JSON.stringify({ port: simulator.port })}\n`);
  const stop = (): void => { void simulator.stop().then(() => process.exit(0)); };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => { process.stderr.write(`smsc failed: ${err instanceof Error ? err.stack : String(err)}\n`); process.exit(1); });
