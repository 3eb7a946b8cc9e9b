// A promise-based SMPP client for tests and benchmarks, over the `smpp` package's client
// Session: bind, submit_sm, query_sm, enquire_link, unbind, raw bytes, and every PDU the server
// sends kept in order (deliver_sm answered automatically with a configurable status). Also a
// harness that runs the SMPP gateway in-process against a running stack.
import { connect, PDU, type PduOptions, type Session } from 'smpp';
import type { SmppOptions } from '../gateways/smpp';
import { createLogger } from '../infra/logger';
import { connectNats, type Nats } from '../infra/nats';
import { buildSmppServices, startSmppGateway, type SmppGatewayRole } from '../roles/gateway-smpp';
import { AccountDirectory } from '../stores/account-directory';
import { AccountStore } from '../stores/account-store';
import { BalanceLedger } from '../stores/balance-ledger';
import { eventually } from './eventually';

export type BindMode = 'transmitter' | 'receiver' | 'transceiver';

export class TestSmppClient {
  /** Every PDU received from the server, in order. */
  readonly received: PDU[] = [];
  /** deliver_sm received (also in `received`). */
  readonly delivered: PDU[] = [];
  /** command_status answered to deliver_sm; set to an error to make the server retry. */
  deliverStatus = 0;
  /** When false, deliver_sm are recorded but not answered. */
  answerDeliveries = true;
  private closedFlag = false;
  readonly closed: Promise<void>;
  private readonly listeners = new Set<() => void>();

  private constructor(readonly session: Session) {
    this.closed = new Promise((resolve) => session.on('close', () => {
      this.closedFlag = true;
      this.notify();
      resolve();
    }));
    session.on('error', () => undefined);
    session.on('pdu', (pdu) => {
      this.received.push(pdu);
      if (pdu.command === 'deliver_sm') {
        this.delivered.push(pdu);
        if (this.answerDeliveries) session.send(pdu.response({ command_status: this.deliverStatus }));
      } else if (pdu.command === 'enquire_link') {
        session.send(pdu.response());
      } else if (pdu.command === 'unbind') {
        session.send(pdu.response());
      }
      this.notify();
    });
  }

  static connect(port: number, host = '127.0.0.1'): Promise<TestSmppClient> {
    return new Promise((resolve, reject) => {
      const session = connect({ host, port });
      session.once('error', reject);
      session.once('connect', () => resolve(new TestSmppClient(session)));
    });
  }

  get isClosed(): boolean {
    return this.closedFlag;
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  /** Sends a request and resolves with its response (or rejects after `timeoutMs`). */
  request(command: string, options: PduOptions = {}, timeoutMs = 10_000): Promise<PDU> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${command}: no response within ${timeoutMs} ms`)), timeoutMs);
      const sent = this.session.send(new PDU(command, options), (resp) => {
        clearTimeout(timer);
        resolve(resp);
      });
      if (!sent) {
        clearTimeout(timer);
        reject(new Error(`${command}: the connection is closed`));
      }
    });
  }

  bind(mode: BindMode, systemId: string, password: string, interfaceVersion = 0x34): Promise<PDU> {
    return this.request(`bind_${mode}`, { system_id: systemId, password, interface_version: interfaceVersion });
  }

  submit(options: PduOptions, timeoutMs?: number): Promise<PDU> {
    return this.request('submit_sm', { source_addr_ton: 5, source_addr_npi: 0, dest_addr_ton: 1, dest_addr_npi: 1, ...options }, timeoutMs);
  }

  enquireLink(): Promise<PDU> {
    return this.request('enquire_link');
  }

  unbind(): Promise<PDU> {
    return this.request('unbind');
  }

  query(messageId: string): Promise<PDU> {
    return this.request('query_sm', { message_id: messageId });
  }

  /** Writes bytes as they are (broken PDUs). */
  raw(bytes: Buffer): void {
    this.session.socket.write(bytes);
  }

  /** Resolves once `predicate` holds over what was received (checked on every PDU and on close). */
  until(predicate: () => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received: ${this.received.map((p) => p.command).join(', ')}`));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  /** The first received PDU matching `predicate`, waiting for it. */
  async next(predicate: (pdu: PDU) => boolean, timeoutMs = 15_000): Promise<PDU> {
    let found: PDU | undefined;
    await this.until(() => (found = this.received.find(predicate)) !== undefined, timeoutMs, 'a matching PDU');
    return found as PDU;
  }

  async close(): Promise<void> {
    if (!this.closedFlag) this.session.destroy();
    await this.closed;
  }
}

/** The text of a received deliver_sm (short_message, else message_payload) as the package decoded it. */
export function textOf(pdu: PDU): string {
  const read = (field: PDU['short_message']): string => {
    if (field === undefined) return '';
    if (typeof field === 'string') return field;
    if (Buffer.isBuffer(field)) return field.toString('latin1');
    return typeof field.message === 'string' ? field.message : field.message.toString('latin1');
  };
  return read(pdu.short_message) || read(pdu.message_payload);
}

// ---------------------------------------------------------------------------------------------
// The gateway in-process over a running stack's NATS (integration suites and bench/smpp.ts):
// the product's lifecycle (worker, carrier connector, simulator) processes what it accepts and
// publishes the status transitions that come back as receipts.

export interface GatewayHarness {
  readonly port: number;
  readonly nats: Nats;
  readonly directory: AccountDirectory;
  readonly gateway: SmppGatewayRole;
  stop(): Promise<void>;
}

export async function startGatewayHarness(natsUrl: string, options: Partial<SmppOptions> = {}, logLevel = process.env['TEST_LOG_LEVEL'] ?? 'warn'): Promise<GatewayHarness> {
  const log = createLogger(logLevel, { component: 'smpp-harness' });
  const nats = await connectNats({ servers: natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'smpp-harness' }, log);
  const directory = await AccountDirectory.open(nats.kv.accounts);
  const built = await buildSmppServices({ nats, directory, balances: new BalanceLedger(nats.kv.balances, nats.pipeline) });
  const gateway = await startSmppGateway({ port: 0, engines: { nats, directory }, services: built.services, log, options: { host: '127.0.0.1', ...options } });
  return {
    port: gateway.port,
    nats,
    directory,
    gateway,
    stop: async () => {
      await gateway.stop();
      built.close();
      directory.stop();
      await nats.close();
    },
  };
}

/** Enables SMPP on the organization and issues the token's system_id/password; waits until `directory` sees them. */
export async function issueSmpp(natsUrl: string, orgId: string, tokenId: string, directory: AccountDirectory): Promise<{ systemId: string; password: string }> {
  const log = createLogger('warn', { component: 'smpp-harness' });
  const nats = await connectNats({ servers: natsUrl, replicas: 1, messageStateTtlHours: 168, name: 'smpp-credentials' }, log);
  try {
    const accounts = new AccountStore(nats.kv.accounts);
    await accounts.setOrgSmpp(orgId, true);
    const { systemId, password } = await accounts.issueSmppCredentials(tokenId);
    await eventually(() => directory.tokenBySystemId(systemId)?.smpp?.systemId === systemId && directory.org(orgId)?.smppEnabled === true, { what: 'the directory to see the SMPP credentials', intervalMs: 20 });
    return { systemId, password };
  } finally {
    await nats.close();
  }
}
