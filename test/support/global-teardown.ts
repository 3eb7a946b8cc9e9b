// Stops the product (SIGTERM, as an operator would) and then the engines of the test stack.
import type { RunningStack } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __STACK__?: RunningStack }).__STACK__?.stop();
}
