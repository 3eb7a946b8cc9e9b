// Failed binds over the wire (docs/smpp.md "Failed binds"; spec 1 §5 item 5): the SMPP server
// in-process with a real client, a fake clock for the failed-bind throttle, and the password
// check (scrypt) counted. A wrong-password flood locks the system_id out after 5 failures, a
// lockout refuses even the right password without hashing it, answers are delayed, the lockout
// ends by itself, and the counters and the log say so (never the password).
import { Writable } from 'node:stream';
import pino from 'pino';
import type { PduOptions } from 'smpp';
import * as secrets from '../../core/accounts/secrets';
import type { Organization, Token } from '../../core/accounts/types';
import { smppBindFailures, smppBindLockouts } from '../../infra/metrics';
import { startSmppServer, type SmppOptions, type SmppServer } from '../../gateways/smpp';
import { STATUS } from '../../gateways/smpp/protocol';
import { FakeBindClock } from '../support/fake-bind-clock';
import { TestSmppClient } from '../../support/smpp-client';

jest.mock('../../core/accounts/secrets', () => {
  const actual = jest.requireActual<typeof import('../../core/accounts/secrets')>('../../core/accounts/secrets');
  return { ...actual, verifySmppPasswordAsync: jest.fn(actual.verifySmppPasswordAsync) };
});
const scrypts = secrets.verifySmppPasswordAsync as jest.MockedFunction<typeof secrets.verifySmppPasswordAsync>;

const PASSWORD = 'pw123456';
const WRONG = 'guess-0001';
const PASSWORD_HASH = secrets.hashSmppPassword(PASSWORD);

const token = (id: string, systemId: string): Token => ({
  id, kind: 'api_sms', name: id, orgId: 'org-1', projectId: 'project-1', datasourceId: null, scopes: [], hash: '00', createdAt: '2026-01-01T00:00:00.000Z',
  revokedAt: null, webhook: null, smpp: { systemId, passwordHash: PASSWORD_HASH }, numbers: [],
});
const TOKENS = [token('t1', 'acme'), token('t2', 'other')];
const ORG: Organization = { id: 'org-1', name: 'Org', currency: 'EUR', smppEnabled: true, createdAt: '2026-01-01T00:00:00.000Z' };

async function counter(metric: typeof smppBindFailures | typeof smppBindLockouts, label: string, value: string): Promise<number> {
  const { values } = await metric.get();
  return values.find((v) => (v.labels as Record<string, unknown>)[label] === value)?.value ?? 0;
}

describe('SMPP failed binds are throttled per system_id and address (docs/smpp.md, spec 1 §5 item 5)', () => {
  let clock: FakeBindClock;
  let server: SmppServer;
  let logLines: string[];
  const clients: TestSmppClient[] = [];

  const client = async (): Promise<TestSmppClient> => {
    const c = await TestSmppClient.connect(server.port);
    clients.push(c);
    return c;
  };
  const start = async (options: Partial<SmppOptions> = {}): Promise<void> => {
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { logLines.push(...chunk.toString('utf8').split('\n').filter(Boolean)); done(); } });
    server = await startSmppServer(0, {
      directory: { tokenBySystemId: (s) => TOKENS.find((t) => t.smpp?.systemId === s), token: (id) => TOKENS.find((t) => t.id === id), org: (id) => (id === ORG.id ? ORG : undefined) },
      acceptance: { submitBulk: () => Promise.reject(new Error('no submits here')) },
      states: { get: async () => null },
      receipts: { ensure: async () => undefined, open: () => ({ stop: async () => undefined }) },
      log: pino({ level: 'info' }, sink),
      clock,
    }, { host: '127.0.0.1', ...options });
  };

  beforeEach(async () => {
    clock = new FakeBindClock(5_000_000);
    logLines = [];
    scrypts.mockClear();
    await start();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await server.stop();
  });

  it('after 5 wrong passwords the system_id is locked out: delayed ESME_RBINDFAIL without a password check, the right password too, until the lockout ends by itself', async () => {
    const failuresBefore = await counter(smppBindFailures, 'reason', 'wrong_password');
    const lockedBefore = await counter(smppBindFailures, 'reason', 'locked_out');
    const lockoutsBefore = await counter(smppBindLockouts, 'scope', 'system_id');
    const c = await client();
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await c.bind('transceiver', 'acme', WRONG)).command_status);
    expect(statuses).toEqual([...Array<number>(5).fill(STATUS.ESME_RINVPASWD), ...Array<number>(15).fill(STATUS.ESME_RBINDFAIL)]);
    expect(scrypts).toHaveBeenCalledTimes(5);
    // The 5th failure (it starts the lockout) and each refusal of the lockout wait 1 s; the first 4 are answered at once.
    expect(clock.delays).toEqual(Array<number>(16).fill(1000));

    // The right password during the lockout: refused the same way, still without a check.
    expect((await c.bind('transceiver', 'acme', PASSWORD)).command_status).toBe(STATUS.ESME_RBINDFAIL);
    expect(scrypts).toHaveBeenCalledTimes(5);
    // Another system_id from the same address is not locked (20 failures per address are needed).
    expect((await (await client()).bind('transceiver', 'other', PASSWORD)).command_status).toBe(STATUS.ESME_ROK);

    clock.t += 299_000;
    expect((await c.bind('transceiver', 'acme', PASSWORD)).command_status).toBe(STATUS.ESME_RBINDFAIL);
    clock.t += 1_000;
    expect((await c.bind('transceiver', 'acme', PASSWORD)).command_status).toBe(STATUS.ESME_ROK);
    expect(server.sessions('acme')).toBe(1);

    expect(await counter(smppBindFailures, 'reason', 'wrong_password')).toBe(failuresBefore + 5);
    expect(await counter(smppBindFailures, 'reason', 'locked_out')).toBe(lockedBefore + 17);
    expect(await counter(smppBindLockouts, 'scope', 'system_id')).toBe(lockoutsBefore + 1);

    const lockout = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'smpp: too many failed binds; binds locked out');
    expect(lockout).toEqual([expect.objectContaining({ level: 40, scope: 'system_id', systemId: 'acme', windowSeconds: 60, lockoutSeconds: 300 })]);
    const refusals = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['msg'] === 'smpp: bind refused');
    expect(refusals).toHaveLength(22);
    expect(refusals[19]).toMatchObject({ systemId: 'acme', status: 'ESME_RBINDFAIL', reason: expect.stringMatching(/^too many failed binds for this system_id: locked out for \d+ s more$/) as unknown });
    expect(logLines.join('\n')).not.toContain(WRONG);
    expect(logLines.join('\n')).not.toContain(PASSWORD);
  });

  it('a flood of parallel wrong-password binds on many connections runs at most 5 password checks', async () => {
    const conns = await Promise.all(Array.from({ length: 40 }, () => client()));
    const statuses = await Promise.all(conns.map((c) => c.bind('transmitter', 'acme', WRONG).then((r) => r.command_status)));
    expect(scrypts.mock.calls.length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === STATUS.ESME_RINVPASWD)).toHaveLength(5);
    expect(statuses.filter((s) => s === STATUS.ESME_RBINDFAIL)).toHaveLength(35);
    expect((await conns[0]?.bind('transmitter', 'acme', PASSWORD))?.command_status).toBe(STATUS.ESME_RBINDFAIL);
  });

  it('an address that fails 20 binds across system_ids is locked out for every system_id; another window of the clock forgets old failures', async () => {
    const c = await client();
    const lockoutsBefore = await counter(smppBindLockouts, 'scope', 'address');
    for (let i = 0; i < 10; i++) expect((await c.bind('transmitter', `nosuch${i}`, WRONG)).command_status).toBe(STATUS.ESME_RINVSYSID);
    clock.t += 60_001; // the first 10 leave the window
    for (let i = 0; i < 19; i++) expect((await c.bind('transmitter', `nosuch${i}`, WRONG)).command_status).toBe(STATUS.ESME_RINVSYSID);
    expect((await c.bind('transmitter', 'nosuch19', WRONG)).command_status).toBe(STATUS.ESME_RINVSYSID);
    expect((await c.bind('transmitter', 'other', PASSWORD)).command_status).toBe(STATUS.ESME_RBINDFAIL);
    expect(await counter(smppBindLockouts, 'scope', 'address')).toBe(lockoutsBefore + 1);
    expect(scrypts).not.toHaveBeenCalled();
  });

  it('a legitimate client that mistypes 4 times binds at once with the right password, and the failures are forgotten', async () => {
    const c = await client();
    for (let i = 0; i < 4; i++) expect((await c.bind('transmitter', 'acme', WRONG)).command_status).toBe(STATUS.ESME_RINVPASWD);
    expect((await c.bind('transmitter', 'acme', PASSWORD)).command_status).toBe(STATUS.ESME_ROK);
    const d = await client();
    for (let i = 0; i < 4; i++) expect((await d.bind('transmitter', 'acme', WRONG)).command_status).toBe(STATUS.ESME_RINVPASWD);
    expect(clock.delays).toEqual([]);
  });

  it('the thresholds, window and lockout are settings (SMPP_BIND_* in config/index.ts)', async () => {
    await server.stop();
    await start({ maxBindFailuresPerSystemId: 2, bindLockoutMs: 10_000, bindRefusalDelayMs: 250 } satisfies Partial<SmppOptions>);
    const c = await client();
    const bind = (password: string, options: PduOptions = {}) => c.request('bind_transmitter', { system_id: 'acme', password, ...options }).then((r) => r.command_status);
    expect([await bind(WRONG), await bind(WRONG), await bind(PASSWORD)]).toEqual([STATUS.ESME_RINVPASWD, STATUS.ESME_RINVPASWD, STATUS.ESME_RBINDFAIL]);
    expect(clock.delays).toEqual([250, 250]);
    clock.t += 10_000;
    expect(await bind(PASSWORD)).toBe(STATUS.ESME_ROK);
  });
});
