// Stops the product (SIGTERM, as an operator would) and then the engines of the test stack.
import type { RunningStack } from '../../support/stack';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __STACK__?: RunningStack }).__STACK__?.stop();
}
