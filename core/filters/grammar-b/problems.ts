// Client errors of Grammar B: always AppError INVALID_FILTER (400 `{ title, status, detail }`)
// whose detail starts with the node path the client sent (`root.children[2].values`) and
// names the rule broken.
import { AppError } from '../../errors';

export function invalid(path: string, rule: string): AppError {
  return new AppError('INVALID_FILTER', `${path}: ${rule}`);
}

/** A value quoted for a detail, cut so a 10 kB value does not become a 10 kB detail. */
export function quote(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? String(value);
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

export const child = (path: string, name: string): string => `${path}.${name}`;
export const item = (path: string, index: number): string => `${path}[${index}]`;
