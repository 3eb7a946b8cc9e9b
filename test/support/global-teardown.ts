// Stops the product (SIGTERM, as an operator would) and then the engines of the test stack.
import type { ChildProcess } from 'node:child_process';

export default async function globalTeardown(): Promise<void> {
  const stack = (globalThis as { __STACK__?: { product: ChildProcess; engines: { stop(): Promise<void> } } }).__STACK__;
  if (!stack) return;
  const { product, engines } = stack;
  if (product.exitCode === null) {
    const exited = new Promise<void>((resolve) => product.once('exit', () => resolve()));
    product.kill('SIGTERM');
    const timer = setTimeout(() => product.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  await engines.stop();
}
