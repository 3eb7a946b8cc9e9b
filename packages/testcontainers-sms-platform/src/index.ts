// @sms-platform/testcontainers: the SMS platform in one container (every role, embedded
// engines) for integration tests, provisioned over its admin API (/admin/v1, ADMIN_TOKEN).
//
//   const platform = await new SmsPlatformContainer().withAdminToken().withPrivateWebhookTargets().start();
//   const org = await platform.createOrganization({ balance: 10, smsPrices: { GB: 0.04 } });
//   await fetch(`${platform.getBaseUrl()}/transactional/v1/sms`, { ... Authorization: Bearer org.token ... });
import { randomBytes } from 'node:crypto';
import { AbstractStartedContainer, GenericContainer, Wait, type StartedTestContainer } from 'testcontainers';

export const DEFAULT_IMAGE = 'localhost/sms-platform:latest';
export const HTTP_PORT = 8080;
export const SMPP_PORT = 2775;
/** A first start creates its engines' data (Temporal, JetStream, ClickHouse): allow for a slow machine. */
const STARTUP_TIMEOUT_MS = 180_000;

/** What `createOrganization` made: ids, and the api_sms token's value (shown once by the platform). */
export interface CreatedOrganization {
  readonly organizationId: string;
  readonly projectId: string;
  readonly tokenId: string;
  /** `Authorization: Bearer <token>` for /transactional/v1 and the DLR webhook of this token. */
  readonly token: string;
  /** The webhook's Standard Webhooks secret (`whsec_...`), when `webhookUrl` was given. */
  readonly webhookSecret?: string;
}

export interface OrganizationOptions {
  readonly name?: string;
  /** ISO 4217; default EUR. */
  readonly currency?: string;
  /** Funds to start with (default 100). */
  readonly balance?: number;
  /** Price per SMS segment by ISO 3166 alpha-2 country (default: GB, DE, US, FR, NL at 0.05). */
  readonly smsPrices?: Readonly<Record<string, number>>;
  /** Where the token's DLRs go (from a container: see `hostAddress()`); needs `withPrivateWebhookTargets()` for http:// and private hosts. */
  readonly webhookUrl?: string;
}

/** The demo organization a container started `withDemoOrganization()` created ($DATA_DIR/demo.json). */
export interface DemoOrganization {
  readonly organization: string;
  readonly project: string;
  readonly token: string;
  readonly tokenId: string;
  readonly legacyToken: string;
  readonly smpp: { readonly systemId: string; readonly password: string };
  readonly currency: string;
}

const DEFAULT_PRICES: Readonly<Record<string, number>> = { GB: 0.05, DE: 0.05, US: 0.05, FR: 0.05, NL: 0.05 };

/** An error answer of the admin API: `{ title, status, detail }`. */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  constructor(readonly status: number, readonly body: unknown, what: string) {
    super(`${what}: HTTP ${status} ${JSON.stringify(body)}`);
  }
}

export class SmsPlatformContainer extends GenericContainer {
  private adminToken: string | undefined;
  private demo = false;

  constructor(image: string = DEFAULT_IMAGE) {
    super(image);
    this.withExposedPorts(HTTP_PORT, SMPP_PORT)
      // /health is 200 once NATS, Temporal and ClickHouse answer (503 while one is down).
      .withWaitStrategy(Wait.forHttp('/health', HTTP_PORT).forStatusCode(200))
      .withStartupTimeout(STARTUP_TIMEOUT_MS);
    // Docker on Linux has no host.docker.internal by default (podman has host.containers.internal).
    if (hostAddress() === 'host.docker.internal') this.withExtraHosts([{ host: 'host.docker.internal', ipAddress: 'host-gateway' }]);
  }

  /** Turns the admin API on (ADMIN_TOKEN); a random 64-character token unless given (at least 32 characters). */
  withAdminToken(token: string = randomBytes(32).toString('hex')): this {
    if (token.length < 32) throw new Error('the admin token must be at least 32 characters (the platform refuses to start otherwise)');
    this.adminToken = token;
    return this;
  }

  /** Lets the platform create its demo organization on start (funds, prices, tokens, SMPP credentials): `getDemoOrganization()`. */
  withDemoOrganization(): this {
    this.demo = true;
    return this;
  }

  /**
   * WEBHOOK_ALLOW_PRIVATE_TARGETS=true: webhooks over http:// and to private addresses, such as a
   * receiver in the test process reached through the host's address. Off by default, as in production.
   */
  withPrivateWebhookTargets(): this {
    this.withEnvironment({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    return this;
  }

  /** How long the simulated carrier takes per step (default 200 ms; 0 for the fastest DLRs). */
  withSimulatorLatency(ms: number): this {
    this.withEnvironment({ SIMULATOR_LATENCY_MS: String(ms) });
    return this;
  }

  override async start(): Promise<StartedSmsPlatformContainer> {
    this.withEnvironment({ DEMO_SEED: this.demo ? 'true' : 'false', ...(this.adminToken ? { ADMIN_TOKEN: this.adminToken } : {}) });
    return new StartedSmsPlatformContainer(await super.start(), this.adminToken, this.demo);
  }
}

export class StartedSmsPlatformContainer extends AbstractStartedContainer {
  constructor(started: StartedTestContainer, private readonly adminToken: string | undefined, private readonly demo: boolean) {
    super(started);
  }

  /** `http://<host>:<port>`: the SMS API at /transactional/v1, ingestion at /ingest/v1, /openapi.json, /health. */
  getBaseUrl(): string {
    return `http://${this.getHost()}:${this.getMappedPort(HTTP_PORT)}`;
  }

  /** The host port of the customer SMPP server (v3.4 / v5.0). */
  getSmppPort(): number {
    return this.getMappedPort(SMPP_PORT);
  }

  getAdminToken(): string {
    if (!this.adminToken) throw new Error('the admin API is off: start the container withAdminToken()');
    return this.adminToken;
  }

  /** The demo organization (started `withDemoOrganization()`). */
  async getDemoOrganization(): Promise<DemoOrganization> {
    if (!this.demo) throw new Error('no demo organization: start the container withDemoOrganization()');
    const { output, exitCode } = await this.exec(['cat', '/data/demo.json']);
    if (exitCode !== 0) throw new Error(`cannot read /data/demo.json in the container: ${output}`);
    return JSON.parse(output) as DemoOrganization;
  }

  /** One admin API call (`/admin/v1` + path); an error answer throws AdminApiError. */
  async admin<T>(method: 'POST' | 'PUT', path: string, body: unknown): Promise<T> {
    const res = await fetch(`${this.getBaseUrl()}/admin/v1${path}`, {
      method, headers: { authorization: `Bearer ${this.getAdminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { entity?: T };
    if (!res.ok || answer.entity === undefined) throw new AdminApiError(res.status, answer, `${method} /admin/v1${path}`);
    return answer.entity;
  }

  /**
   * An organization ready to send: a project, an api_sms token, funds, SMS prices and, when
   * `webhookUrl` is given, its DLR webhook. The token works as soon as this resolves.
   */
  async createOrganization(options: OrganizationOptions = {}): Promise<CreatedOrganization> {
    const org = await this.admin<{ id: string }>('POST', '/organizations', { name: options.name ?? 'Test organization', ...(options.currency ? { currency: options.currency } : {}) });
    const project = await this.admin<{ id: string }>('POST', `/organizations/${org.id}/projects`, { name: 'Test project' });
    const token = await this.admin<{ id: string; value: string }>('POST', `/organizations/${org.id}/tokens`, { kind: 'api_sms', project: project.id });
    const balance = options.balance ?? 100;
    if (balance > 0) await this.admin('POST', `/organizations/${org.id}/balance/top-up`, { amount: balance });
    for (const [country, price] of Object.entries(options.smsPrices ?? DEFAULT_PRICES)) {
      await this.admin('POST', `/organizations/${org.id}/prices`, { kind: 'sms', country, price });
    }
    const webhook = options.webhookUrl === undefined ? undefined
      : await this.admin<{ secret: string }>('PUT', `/organizations/${org.id}/tokens/${token.id}/webhook`, { url: options.webhookUrl });
    return { organizationId: org.id, projectId: project.id, tokenId: token.id, token: token.value, ...(webhook ? { webhookSecret: webhook.secret } : {}) };
  }
}

/**
 * The name under which a container reaches this (host) machine: `host.containers.internal` with
 * podman, `host.docker.internal` with Docker (the container is started with it mapped to the
 * host gateway). `SMS_PLATFORM_HOST_ADDRESS` overrides it. A receiver must listen on an address
 * the container can reach (0.0.0.0, not 127.0.0.1).
 */
export function hostAddress(): string {
  const override = process.env['SMS_PLATFORM_HOST_ADDRESS'];
  if (override) return override;
  const docker = process.env['DOCKER_HOST'] ?? '';
  return /podman/i.test(docker) || process.env['TESTCONTAINERS_PODMAN'] === 'true' ? 'host.containers.internal' : 'host.docker.internal';
}
