// Ids are UUIDv7: time-ordered, so ClickHouse ordering by id is ordering by creation.
import { v7, validate, version } from 'uuid';

export function newId(): string {
  return v7();
}

export function isId(value: string): boolean {
  return validate(value) && version(value) === 7;
}

/** Milliseconds since the epoch encoded in a UUIDv7. */
export function idTime(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
