// Admin CLI: `npm run admin -- <noun> <verb> [options] [--json]`. Manages organizations,
// projects, tokens, balances, prices, webhooks, SMPP credentials and two-way numbers in
// NATS KV; needs the stack's NATS: the one recorded in $DATA_DIR/run/stack.json by the
// `npm start` of this DATA_DIR (infra/stack-file.ts), or NATS_URL. Says which on stderr.
import { Command, Option } from 'commander';
import { loadConfig } from '../config';
import { PRODUCT_SCOPES, TOKEN_KINDS, type PriceKind, type TokenKind } from '../core/accounts';
import { tokenView as showToken, type Provisioning } from '../core/provisioning/provisioning';
import { isAppError } from '../core/errors';
import { fromMicros } from '../core/money';
import { createLogger } from '../infra/logger';
import { connectNats, type Nats } from '../infra/nats';
import { readStackFile, resolveStackTarget, stackRunning, webhookPolicyFor, type StackTarget } from '../infra/stack-file';
import { connectTemporal } from '../infra/temporal';
import { AccountConflictError, AccountNotFoundError, AccountStore } from '../stores/account-store';
import { BalanceLedger } from '../stores/balance-ledger';
import { DeadLetterStore } from '../stores/dead-letter-store';
import { provisioningOver } from '../stores/provisioning';
import { isRateLimitCounter, RATE_LIMIT_COUNTERS } from '../gateways/http/rate-limit';
import { registerIngestCommands } from './ingest-commands';
import { registerAudienceCommands } from './audience-commands';
import { registerMessageCommands } from './message-commands';
import { registerConsoleCommands } from './console-commands';
import { registerOptOutCommands } from './opt-out-commands';
import { registerWorkflowCommands } from './workflow-commands';
import { decode, SUBJECTS, WORKFLOW_IDS, WORKFLOW_TYPES } from '../core/bus';
import type { systemProbe } from '../workflows/system-probe';

const config = loadConfig();
const log = createLogger('warn', { component: 'admin' });

interface Context {
  readonly nats: Nats;
  readonly accounts: AccountStore;
  readonly balances: BalanceLedger;
  /** The provisioning functions the admin API calls too (core/provisioning/provisioning.ts). */
  readonly provisioning: Provisioning;
}

let json = false;

let resolved: StackTarget | undefined;
/** The stack of DATA_DIR (or NATS_URL / TEMPORAL_ADDRESS); named once on stderr, so --json output stays parseable. */
function target(): StackTarget {
  if (resolved) return resolved;
  resolved = resolveStackTarget({
    natsUrl: config.nats.url, temporalAddress: config.temporal.address, dataDir: config.dataDir, record: readStackFile(config.dataDir), alive: stackRunning,
    defaults: { natsUrl: `nats://127.0.0.1:${config.nats.port}`, temporalAddress: `127.0.0.1:${config.temporal.port}`, temporalUi: `http://127.0.0.1:${config.temporal.uiPort}` },
  });
  process.stderr.write(`admin: ${resolved.description}\n`);
  return resolved;
}

const temporalAddress = (): string => target().temporalAddress;

function print(human: string, data: unknown): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
}


async function withContext<T>(fn: (ctx: Context) => Promise<T>): Promise<T> {
  const servers = target().natsUrl;
  let nats: Nats;
  try {
    nats = await connectNats({ servers, replicas: config.nats.replicas, messageStateTtlHours: config.messageStateTtlHours, name: 'sms-platform:admin' }, log);
  } catch (err) {
    throw new Error(`cannot reach NATS at ${servers} (${err instanceof Error ? err.message : String(err)}): start the stack with \`npm start\` (with this DATA_DIR) or set NATS_URL`);
  }
  try {
    const accounts = new AccountStore(nats.kv.accounts);
    const balances = new BalanceLedger(nats.kv.balances);
    // Public HTTPS only unless WEBHOOK_ALLOW_PRIVATE_TARGETS (spec 1 §6 rule 1), of this environment or else of the
    // running stack (its runtime file), so the CLI never stores a URL the stack will refuse at every delivery.
    const allowPrivateTargets = webhookPolicyFor(process.env['WEBHOOK_ALLOW_PRIVATE_TARGETS'], config.lifecycle.webhook.allowPrivateTargets, readStackFile(config.dataDir));
    const provisioning = provisioningOver({ accounts, balances, accountsKv: nats.kv.accounts }, { allowPrivateTargets });
    return await fn({ nats, accounts, balances, provisioning });
  } finally {
    await nats.close();
  }
}

function action<A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return (...args: A) => withContext((ctx) => fn(ctx, ...args));
}

function amount(text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`"${text}" is not a non-negative amount`);
  return value;
}

function priceKind(text: string): PriceKind {
  if (text !== 'sms' && text !== 'lookup') throw new Error(`--kind must be sms or lookup, got "${text}"`);
  return text;
}

const program = new Command()
  .name('admin')
  .description('Administer organizations, projects, tokens, balances, prices, webhooks, SMPP credentials and numbers.')
  .option('--json', 'print JSON instead of text')
  .hook('preAction', (cmd) => { json = Boolean(cmd.optsWithGlobals<{ json?: boolean }>().json); });

const org = program.command('org').description('organizations');
org.command('create').requiredOption('--name <name>').option('--currency <code>', 'ISO 4217 currency', 'EUR').option('--smpp', 'enable SMPP')
  .action(action(async (ctx, o: { name: string; currency: string; smpp?: boolean }) => {
    const created = await ctx.provisioning.createOrganization({ name: o.name, currency: o.currency, smppEnabled: Boolean(o.smpp) });
    print(`organization ${created.id} created`, created);
  }));
org.command('list').action(action(async (ctx) => {
  const orgs = await ctx.accounts.listOrgs();
  print(orgs.map((o) => `${o.id}  ${o.name}  ${o.currency}  smpp=${o.smppEnabled}`).join('\n') || '(none)', orgs);
}));
org.command('show').requiredOption('--org <id>').action(action(async (ctx, o: { org: string }) => {
  const found = await ctx.accounts.getOrg(o.org);
  print(JSON.stringify(found, null, 2), found);
}));
org.command('smpp').description('enable or disable SMPP for an organization').requiredOption('--org <id>').option('--enable').option('--disable')
  .action(action(async (ctx, o: { org: string; enable?: boolean; disable?: boolean }) => {
    if (Boolean(o.enable) === Boolean(o.disable)) throw new Error('give exactly one of --enable or --disable');
    const updated = await ctx.accounts.setOrgSmpp(o.org, Boolean(o.enable));
    print(`SMPP ${updated.smppEnabled ? 'enabled' : 'disabled'} on ${updated.id}`, updated);
  }));

org.command('rate-limit').description('grant an organization its own requests-per-minute ceiling on one endpoint')
  .requiredOption('--org <id>').requiredOption('--endpoint <name>', 'counter name, e.g. v1-sms-create, v1-sms-bulk, legacy-sms-create')
  .option('--per-minute <n>', 'the ceiling').option('--reset', 'back to the default')
  .action(action(async (ctx, o: { org: string; endpoint: string; perMinute?: string; reset?: boolean }) => {
    const perMinute = o.reset ? null : Number(o.perMinute);
    if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1)) throw new Error('give --per-minute <positive integer> or --reset');
    // A misspelt counter would be stored and never consulted: refuse it (--reset may still clear one).
    if (perMinute !== null && !isRateLimitCounter(o.endpoint)) throw new Error(`unknown endpoint "${o.endpoint}"; counters are: ${RATE_LIMIT_COUNTERS.join(', ')}`);
    const updated = await ctx.accounts.setOrgRateLimit(o.org, o.endpoint, perMinute);
    print(`rate limits of ${updated.id}: ${JSON.stringify(updated.rateLimits ?? {})}`, updated);
  }));

const project = program.command('project').description('projects');
project.command('create').requiredOption('--org <id>').requiredOption('--name <name>').action(action(async (ctx, o: { org: string; name: string }) => {
  const created = await ctx.provisioning.createProject(o.org, o.name);
  print(`project ${created.id} created`, created);
}));
project.command('list').option('--org <id>').action(action(async (ctx, o: { org?: string }) => {
  const projects = await ctx.accounts.listProjects(o.org);
  print(projects.map((p) => `${p.id}  ${p.name}  org=${p.orgId}`).join('\n') || '(none)', projects);
}));

const token = program.command('token').description('API tokens (shown once, stored as a hash)');
token.command('create').requiredOption('--org <id>').addOption(new Option('--kind <kind>').choices([...TOKEN_KINDS]).makeOptionMandatory())
  .option('--project <id>').option('--datasource <id>', 'the datasource of a datasource token (its project is implied)')
  .option('--scopes <list>', `comma-separated scopes of a product token: ${PRODUCT_SCOPES.join(', ')}`).option('--scope <scope...>', 'the same, space-separated').option('--name <name>')
  .action(action(async (ctx, o: { org: string; kind: TokenKind; project?: string; datasource?: string; scopes?: string; scope?: string[]; name?: string }) => {
    const scopes = [...(o.scope ?? []), ...(o.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean)];
    const created = await ctx.provisioning.createToken({ kind: o.kind, orgId: o.org, projectId: o.project ?? null, datasourceId: o.datasource ?? null, scopes, ...(o.name ? { name: o.name } : {}) });
    print(`token ${created.token.id} (${created.token.kind}) created; its value is shown once:\n${created.value}`, { ...showToken(created.token), value: created.value });
  }));
token.command('list').option('--org <id>').option('--project <id>').action(action(async (ctx, o: { org?: string; project?: string }) => {
  const tokens = await ctx.accounts.listTokens({ ...(o.org ? { orgId: o.org } : {}), ...(o.project ? { projectId: o.project } : {}) });
  print(tokens.map((t) => `${t.id}  ${t.kind}  ${t.name}  ${t.revokedAt ? `revoked ${t.revokedAt}` : 'active'}`).join('\n') || '(none)', tokens.map(showToken));
}));
token.command('show').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const found = showToken(await ctx.accounts.resolveToken(o.token));
  print(JSON.stringify(found, null, 2), found);
}));
token.command('rotate').description('create a replacement (same kind, project, scopes, webhook); the old one stays valid until revoked')
  .requiredOption('--token <value-or-id>').option('--revoke-old', 'revoke the old token at once')
  .action(action(async (ctx, o: { token: string; revokeOld?: boolean }) => {
    const old = await ctx.accounts.resolveToken(o.token);
    const rotated = await ctx.accounts.rotateToken(old.id);
    if (o.revokeOld) await ctx.accounts.revokeToken(old.id);
    print(`token ${rotated.token.id} replaces ${old.id}${o.revokeOld ? ' (revoked)' : ' (still valid: revoke it once deployed)'}; its value is shown once:\n${rotated.value}`,
      { ...showToken(rotated.token), value: rotated.value, replaced: old.id, replacedRevoked: Boolean(o.revokeOld) });
  }));
token.command('revoke').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const revoked = await ctx.accounts.revokeToken((await ctx.accounts.resolveToken(o.token)).id);
  print(`token ${revoked.id} revoked`, showToken(revoked));
}));

const balance = program.command('balance').description('organization balances');
balance.command('show').requiredOption('--org <id>').action(action(async (ctx, o: { org: string }) => {
  const found = await ctx.balances.get(o.org);
  // Charges taken by requests not yet on the stream (docs/acceptance.md): settled within
  // milliseconds, or refunded by the charge settler if their request died.
  const holds = Object.values(found?.holds ?? {});
  const held = { count: holds.length, amount: fromMicros(holds.reduce((sum, h) => sum + h.micros, 0)), oldest: holds.length > 0 ? new Date(Math.min(...holds.map((h) => h.at))).toISOString() : null };
  const shown = { organization: o.org, currency: found?.currency ?? null, available: fromMicros(found?.availableMicros ?? 0), held };
  print(`${shown.available} ${shown.currency ?? ''}${held.count > 0 ? ` (${held.count} charges held: ${held.amount}, oldest ${held.oldest})` : ''}`.trim(), shown);
}));
balance.command('set').requiredOption('--org <id>').requiredOption('--amount <amount>').option('--currency <code>')
  .action(action(async (ctx, o: { org: string; amount: string; currency?: string }) => {
    const set = await ctx.provisioning.setBalance(o.org, amount(o.amount), o.currency);
    print(`balance of ${o.org}: ${set.available} ${set.currency}`, set);
  }));
balance.command('add').description('add funds (atomic, safe alongside live traffic)').requiredOption('--org <id>').requiredOption('--amount <amount>')
  .action(action(async (ctx, o: { org: string; amount: string }) => {
    const now = await ctx.provisioning.topUp(o.org, amount(o.amount));
    print(`balance of ${o.org}: ${now.available} ${now.currency}`, now);
  }));

const price = program.command('price').description('price profiles per country (sms per segment, lookup per request)');
price.command('set').requiredOption('--org <id>').requiredOption('--kind <sms|lookup>').requiredOption('--country <ISO alpha-2>').requiredOption('--price <amount>').option('--currency <code>')
  .action(action(async (ctx, o: { org: string; kind: string; country: string; price: string; currency?: string }) => {
    const set = await ctx.provisioning.setPrice(o.org, { kind: priceKind(o.kind), country: o.country, price: amount(o.price), ...(o.currency ? { currency: o.currency } : {}) });
    print(`${o.kind} price for ${set.country}: ${fromMicros(set.priceMicros)} ${set.currency}`, { country: set.country, currency: set.currency, price: fromMicros(set.priceMicros) });
  }));
price.command('list').requiredOption('--org <id>').requiredOption('--kind <sms|lookup>').action(action(async (ctx, o: { org: string; kind: string }) => {
  const prices = (await ctx.accounts.listPrices(o.org, priceKind(o.kind))).map((p) => ({ country: p.country, currency: p.currency, price: fromMicros(p.priceMicros) }));
  print(prices.map((p) => `${p.country}  ${p.price} ${p.currency}`).join('\n') || '(none)', prices);
}));
price.command('remove').requiredOption('--org <id>').requiredOption('--kind <sms|lookup>').requiredOption('--country <code>').action(action(async (ctx, o: { org: string; kind: string; country: string }) => {
  await ctx.accounts.removePrice(o.org, priceKind(o.kind), o.country.toUpperCase());
  print(`${o.kind} price for ${o.country.toUpperCase()} removed`, { removed: true });
}));

const webhook = program.command('webhook').description('DLR webhook of an api_sms token');
webhook.command('set').requiredOption('--token <value-or-id>').requiredOption('--url <url>').option('--secret <secret>', 'signing secret (generated when omitted)')
  .action(action(async (ctx, o: { token: string; url: string; secret?: string }) => {
    const token = await ctx.accounts.resolveToken(o.token);
    const updated = await ctx.provisioning.setWebhook(token.orgId, token.id, o.url, o.secret);
    print(`webhook of ${updated.id}: ${updated.webhook?.url}\nsigning secret: ${updated.webhook?.secret}`, { token: updated.id, url: updated.webhook?.url, secret: updated.webhook?.secret });
  }));
webhook.command('show').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const found = await ctx.accounts.resolveToken(o.token);
  print(found.webhook ? `${found.webhook.url}\nsigning secret: ${found.webhook.secret}` : '(no webhook)', { token: found.id, url: found.webhook?.url ?? null, secret: found.webhook?.secret ?? null });
}));
webhook.command('clear').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const updated = await ctx.accounts.clearWebhook((await ctx.accounts.resolveToken(o.token)).id);
  print(`webhook of ${updated.id} removed`, { token: updated.id, url: null });
}));

const smpp = program.command('smpp').description('SMPP credentials of an api_sms token');
smpp.command('issue').description('issue (or reset) the system_id/password pair').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const issued = await ctx.accounts.issueSmppCredentials((await ctx.accounts.resolveToken(o.token)).id);
  print(`system_id: ${issued.systemId}\npassword:  ${issued.password} (shown once)`, { token: issued.token.id, systemId: issued.systemId, password: issued.password });
}));
smpp.command('revoke').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const updated = await ctx.accounts.revokeSmppCredentials((await ctx.accounts.resolveToken(o.token)).id);
  print(`SMPP credentials of ${updated.id} revoked`, { token: updated.id, smpp: null });
}));

const number = program.command('number').description('two-way virtual numbers of an api_sms token');
number.command('add').requiredOption('--token <value-or-id>').requiredOption('--number <msisdn>').action(action(async (ctx, o: { token: string; number: string }) => {
  const updated = await ctx.accounts.addNumber((await ctx.accounts.resolveToken(o.token)).id, o.number);
  print(`numbers of ${updated.id}: ${updated.numbers.join(', ')}`, { token: updated.id, numbers: updated.numbers });
}));
number.command('remove').requiredOption('--token <value-or-id>').requiredOption('--number <msisdn>').action(action(async (ctx, o: { token: string; number: string }) => {
  const updated = await ctx.accounts.removeNumber((await ctx.accounts.resolveToken(o.token)).id, o.number);
  print(`numbers of ${updated.id}: ${updated.numbers.join(', ') || '(none)'}`, { token: updated.id, numbers: updated.numbers });
}));
number.command('list').requiredOption('--token <value-or-id>').action(action(async (ctx, o: { token: string }) => {
  const found = await ctx.accounts.resolveToken(o.token);
  print(found.numbers.join('\n') || '(none)', { token: found.id, numbers: found.numbers });
}));

const dlr = program.command('dlr').description('DLRs whose webhook retry schedule ran out (dead letters)');
dlr.command('dead').description('list dead-lettered DLRs').option('--token <value-or-id>').option('--message <id>')
  .action(action(async (ctx, o: { token?: string; message?: string }) => {
    const tokenId = o.token ? (await ctx.accounts.resolveToken(o.token)).id : undefined;
    const dead = await new DeadLetterStore(ctx.nats.kv.deadDlrs, null).find({ tokenId, messageId: o.message });
    print(dead.map((d) => `${d.messageId}#${d.seq}  ${d.payload.status}  token=${d.tokenId}  failed ${d.failedAt}: ${d.reason}`).join('\n') || '(none)', dead);
  }));
dlr.command('redrive').description('deliver dead-lettered DLRs again, on a fresh retry schedule (one message or all of a token)')
  .option('--token <value-or-id>').option('--message <id>')
  .action(action(async (ctx, o: { token?: string; message?: string }) => {
    if (!o.token && !o.message) throw new Error('give --message <id> or --token <token> (all of its dead letters)');
    const tokenId = o.token ? (await ctx.accounts.resolveToken(o.token)).id : undefined;
    const temporal = await connectTemporal({ address: temporalAddress(), namespace: config.temporal.namespace });
    const store = new DeadLetterStore(ctx.nats.kv.deadDlrs, { client: temporal.client, taskQueue: config.temporal.taskQueue, schedule: config.lifecycle.webhook });
    const dead = await store.find({ tokenId, messageId: o.message });
    try {
      for (const d of dead) await store.redrive(d);
    } finally {
      await temporal.close();
    }
    print(`${dead.length} DLR(s) re-driven`, { redriven: dead.map((d) => ({ messageId: d.messageId, seq: d.seq })) });
  }));

const simulator = program.command('simulator').description('the embedded carrier simulator');
simulator.command('mo').description('make the simulator send a mobile-originated message (e.g. STOP) to one of our numbers')
  .requiredOption('--from <msisdn>', 'the handset').requiredOption('--to <number>', 'our virtual number').requiredOption('--text <text>')
  .action(action(async (ctx, o: { from: string; to: string; text: string }) => {
    const reply = await ctx.nats.nc.request(SUBJECTS.simulatorMo, JSON.stringify(o), { timeout: 5000 });
    const answer = decode('moReply', reply.data);
    if (!answer.ok) throw new Error(`the simulator refused: ${answer.reason ?? 'unknown reason'}`);
    print(`MO from ${o.from} to ${o.to} sent`, answer);
  }));

registerIngestCommands(program, action, print);
registerAudienceCommands(program, action, print);
// Getters: the stack is looked up when a command runs, not when the commands are declared (--help).
registerMessageCommands(program, action, print, { get address() { return target().temporalAddress; }, namespace: config.temporal.namespace, get ui() { return target().temporalUi; } });
registerConsoleCommands(program, action, print);
registerOptOutCommands(program, action, print);
registerWorkflowCommands(program, action, print, { get address() { return target().temporalAddress; }, namespace: config.temporal.namespace, get ui() { return target().temporalUi; }, taskQueue: config.temporal.taskQueue });

const system = program.command('system').description('operations');
system.command('probe').description('run the system probe workflow on the worker and print its answer').action(async () => {
  const temporal = await connectTemporal({ address: temporalAddress(), namespace: config.temporal.namespace });
  try {
    const result = await temporal.client.workflow.execute<typeof systemProbe>(WORKFLOW_TYPES.systemProbe, { taskQueue: config.temporal.taskQueue, workflowId: WORKFLOW_IDS.systemProbe(Date.now()), args: ['ping'], workflowExecutionTimeout: '30 seconds' });
    print(`worker ${String((result as { worker: string }).worker)} answered`, result);
  } finally {
    await temporal.close();
  }
});

program.parseAsync(process.argv).catch((err: unknown) => {
  const known = err instanceof AccountNotFoundError || err instanceof AccountConflictError || (isAppError(err) && err.code === 'NOT_FOUND');
  // A refusal of the provisioning rules names each field with its reason (the option of the same name).
  const fields = isAppError(err) && err.fields ? Object.entries(err.fields).map(([field, reasons]) => `--${field} ${reasons.join('; ')}`).join('\n       ') : undefined;
  process.stderr.write(`admin: ${fields ?? (err instanceof Error ? err.message : String(err))}\n`);
  if (!known && !(err instanceof Error)) process.stderr.write(`${String(err)}\n`);
  process.exitCode = known ? 3 : 1;
});
