// Admin CLI commands of the web console and of webhook signatures (docs/console.md,
// docs/webhooks.md): console operators, webhook secret rotation and the headers of earlier
// releases. Registered on the admin program by cli/admin.ts.
import type { Command } from 'commander';
import { receiverSecret } from '../core/sms';
import type { Nats } from '../infra/nats';
import type { AccountStore } from '../stores/account-store';
import { OperatorStore } from '../stores/operator-store';

export interface ConsoleCommandContext {
  readonly nats: Nats;
  readonly accounts: AccountStore;
}

type Action = <A extends unknown[]>(fn: (ctx: ConsoleCommandContext, ...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Print = (human: string, data: unknown) => void;

const DEFAULT_OVERLAP_HOURS = 24;

function onOff(text: string): boolean {
  if (text !== 'on' && text !== 'off') throw new Error(`give on or off, got "${text}"`);
  return text === 'on';
}

export function registerConsoleCommands(program: Command, action: Action, print: Print): void {
  const operator = program.command('operator').description('people who sign in to the web console at /console (one organization each)');
  operator.command('create').description('create an operator; the password is printed once').requiredOption('--org <id>').requiredOption('--email <email>')
    .action(action(async (ctx, o: { org: string; email: string }) => {
      await ctx.accounts.getOrg(o.org);
      const { operator: created, password } = await (await OperatorStore.open(ctx.nats.nc)).create(o.org, o.email);
      print(`operator ${created.email} (${created.id}) of ${created.orgId} created; the password is shown once:\n${password}`,
        { id: created.id, organization: created.orgId, email: created.email, password });
    }));
  operator.command('list').option('--org <id>').action(action(async (ctx, o: { org?: string }) => {
    const found = (await (await OperatorStore.open(ctx.nats.nc)).list(o.org)).map((op) => ({ id: op.id, organization: op.orgId, email: op.email, createdAt: op.createdAt }));
    print(found.map((op) => `${op.id}  ${op.email}  org=${op.organization}`).join('\n') || '(none)', found);
  }));
  operator.command('remove').requiredOption('--id <operator id>').action(action(async (ctx, o: { id: string }) => {
    const removed = await (await OperatorStore.open(ctx.nats.nc)).remove(o.id);
    print(`operator ${removed.email} removed (its sessions end at their next request)`, { id: removed.id, removed: true });
  }));

  const webhook = program.commands.find((c) => c.name() === 'webhook') ?? program.command('webhook');
  webhook.command('rotate').description('new whsec_ signing secret; the previous one keeps signing (a second signature) during the overlap')
    .requiredOption('--token <value-or-id>').option('--overlap-hours <n>', 'how long the previous secret still signs', String(DEFAULT_OVERLAP_HOURS))
    .action(action(async (ctx, o: { token: string; overlapHours: string }) => {
      const hours = Number(o.overlapHours);
      if (!Number.isFinite(hours) || hours < 0 || hours > 24 * 30) throw new Error('--overlap-hours must be a number from 0 to 720');
      const updated = await ctx.accounts.rotateWebhookSecret((await ctx.accounts.resolveToken(o.token)).id, Math.round(hours * 3600));
      const hook = updated.webhook;
      print(`webhook of ${updated.id}: new signing secret ${hook?.secret}${hook?.previous ? `\nthe previous secret signs too until ${hook.previous.until}` : ''}`,
        { token: updated.id, url: hook?.url, secret: hook?.secret, previousUntil: hook?.previous?.until ?? null });
    }));
  webhook.command('signing').description("how a token's webhooks are signed: the Standard Webhooks secret for receivers, and the X-Webhook-* headers of earlier releases")
    .requiredOption('--token <value-or-id>').option('--legacy-headers <on|off>', 'also send X-Webhook-Signature/-Timestamp/-Id (kept for one release)')
    .action(action(async (ctx, o: { token: string; legacyHeaders?: string }) => {
      let token = await ctx.accounts.resolveToken(o.token);
      if (!token.webhook) throw new Error(`token ${token.id} has no webhook: run \`admin webhook set\` first`);
      if (o.legacyHeaders !== undefined) token = await ctx.accounts.setWebhook(token.id, token.webhook.url, undefined, { legacyHeaders: onOff(o.legacyHeaders) });
      const hook = token.webhook;
      if (!hook) throw new Error(`token ${token.id} has no webhook`);
      const shown = { token: token.id, url: hook.url, receiverSecret: receiverSecret(hook), keyFormat: hook.keyFormat ?? 'raw', legacyHeaders: hook.legacyHeaders !== false, previousUntil: hook.previous?.until ?? null };
      print(`webhook of ${token.id}: ${hook.url}\nStandard Webhooks secret (for receivers): ${shown.receiverSecret}\nX-Webhook-* headers of earlier releases: ${shown.legacyHeaders ? 'on' : 'off'}`, shown);
    }));
}
