// Per-endpoint requests-per-minute ceilings granted to an organization or a datasource.

/** `grants` with `endpoint` set to `perMinute`, or removed (back to the default) when null. */
export function withRateGrant(grants: Readonly<Record<string, number>> | undefined, endpoint: string, perMinute: number | null): Record<string, number> {
  const updated = { ...(grants ?? {}) };
  if (perMinute === null) delete updated[endpoint];
  else updated[endpoint] = perMinute;
  return updated;
}
