// DateTime64(3, 'UTC') values travel as 'YYYY-MM-DD hh:mm:ss.sss'; the API speaks ISO 8601.
export function toClickHouseTime(iso: string): string {
  return iso.replace('T', ' ').replace('Z', '');
}

export function fromClickHouseTime(value: string): string {
  return `${value.replace(' ', 'T')}Z`;
}

export function toClickHouseTimeOrNull(iso: string | null): string | null {
  return iso === null ? null : toClickHouseTime(iso);
}

export function fromClickHouseTimeOrNull(value: string | null): string | null {
  return value === null ? null : fromClickHouseTime(value);
}
