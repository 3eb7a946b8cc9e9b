// The AppError a call throws, for tests of refusals: anything else thrown fails the test.
import { AppError } from '../../core/errors';

export function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an AppError, nothing was thrown');
}
