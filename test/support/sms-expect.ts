// What spec 1 says every SMS API answer looks like, as assertions the engine-free suite
// (test/unit/sms-acceptance.test.ts) and the full-stack one (test/integration/sms-api.test.ts)
// share: the problem body (§7), the 422 field errors (§7), the rate-limit headers (§8) and the
// SMS entity's fields (§2.2).
export type Entity = Record<string, unknown> & { id: string };

/** An HTTP answer with its body parsed (support/stack.ts api(), or the unit suite's v1()). */
export interface SpecResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** spec 1 §7: `{ title, status, detail }`, all three required, nothing else. */
export function expectProblem(res: SpecResponse, status: number): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ title: expect.any(String), status, detail: expect.any(String) });
  expect((res.body as { detail: string }).detail.length).toBeGreaterThan(0);
}

/** spec 1 §7: 422 `{ errors: { fields: { <field>: [string] } } }` with exactly `fields` named. */
export function expect422(res: SpecResponse, fields: string[]): Record<string, string[]> {
  expect(res.status).toBe(422);
  const body = res.body as { errors: { fields: Record<string, string[]> } };
  expect(Object.keys(body)).toEqual(['errors']);
  expect(Object.keys(body.errors)).toEqual(['fields']);
  expect(Object.keys(body.errors.fields).sort()).toEqual([...fields].sort());
  for (const messages of Object.values(body.errors.fields)) {
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) expect(m).toEqual(expect.stringMatching(/\S/));
  }
  return body.errors.fields;
}

/** spec 1 §8: X-RateLimit-Limit, -Remaining, -Reset on every response. */
export function expectRateHeaders(res: SpecResponse): void {
  for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) {
    expect({ [name]: res.headers.get(name) }).toEqual({ [name]: expect.stringMatching(/^\d+$/) });
  }
  expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
}

/** spec 1 §2.2 required fields and types; DESIGN §4 timestamps. */
export function expectSmsShape(e: Entity): void {
  expect(e).toEqual(expect.objectContaining({
    id: expect.any(String), status: expect.any(String), from: expect.any(String), country: expect.any(String), to: expect.any(String),
    normalizedTo: expect.any(String), charsCount: expect.any(Number), text: expect.any(String), deliveredText: expect.any(String),
    messagesCount: expect.any(Number), encoding: expect.stringMatching(/^(GSM-7|UCS-2)$/), unicode: expect.any(Boolean),
    allowUnicode: expect.any(Boolean), charged: expect.any(Boolean), createdAt: expect.stringMatching(ISO_MS),
    pricePerSms: expect.any(Number), priceUser: expect.any(Number),
  }));
  expect('clientId' in e && (e['clientId'] === null || typeof e['clientId'] === 'string')).toBe(true);
  for (const key of ['statusCode', 'chargedAt', 'scheduledAt', 'sentAt', 'deliveredAt']) {
    if (key in e && e[key] !== null) expect(typeof e[key]).toBe(key === 'statusCode' ? 'number' : 'string');
  }
}
