// The stack as bench:kannel runs it for the product (every role, the lifecycle consuming), for
// the benchmarks that drive the SMS pipeline end to end: no rate-limit ceiling a run could
// reach, the carrier simulator answering at once, and the product's default webhook timeout and
// retry schedule (the test stack shortens them) towards a receiver on this machine.
export const PIPELINE_STACK_ENV: Readonly<Record<string, string>> = {
  LOG_LEVEL: 'error', SIMULATOR_LATENCY_MS: '0', MESSAGE_VALIDITY_SECONDS: '172800',
  RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_BULK_PER_MINUTE: '1000000000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_RETRY_INITIAL_MS: '1000', WEBHOOK_RETRY_MAX_MS: '60000',
};
