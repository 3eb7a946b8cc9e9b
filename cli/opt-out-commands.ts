// Admin CLI commands of a project's opt-out list (DESIGN §4 "Two-way"; the API's
// /transactional/v1/opt-outs, gateways/http/opt-outs-api.ts): `opt-out list|add|remove --token
// <api_sms token id or value> [--number +…]`; the token names the project. And `token help-text
// --token <t> --text "..."` (or --clear), the automatic reply to HELP/INFO. Registered on the
// admin program by cli/admin.ts.
import type { Command } from 'commander';
import type { Token } from '../core/accounts';
import { checkPhoneNumber } from '../core/sms';
import type { Nats } from '../infra/nats';
import type { AccountStore } from '../stores/account-store';
import { KvOptOutList } from '../stores/opt-outs';

export interface OptOutCommandContext {
  readonly nats: Nats;
  readonly accounts: AccountStore;
}

type Action = <A extends unknown[]>(fn: (ctx: OptOutCommandContext, ...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Print = (human: string, data: unknown) => void;

const DEFAULT_LIST_LIMIT = 1000;

async function projectOf(ctx: OptOutCommandContext, tokenRef: string): Promise<{ token: Token; project: string }> {
  const token = await ctx.accounts.resolveToken(tokenRef);
  if (token.kind !== 'api_sms' || !token.projectId) throw new Error(`token ${token.id} is a ${token.kind} token; opt-outs belong to the project of an api_sms token`);
  if (token.revokedAt) throw new Error(`token ${token.id} is revoked`);
  return { token, project: token.projectId };
}

function numberOf(text: string | undefined): string {
  if (!text) throw new Error('--number is required: a phone number in E.164 form, e.g. +4915112345678');
  const phone = checkPhoneNumber(text.trim());
  if (!phone.ok) throw new Error(`--number ${text}: ${phone.message}`);
  return phone.normalized;
}

function count(text: string, name: string, min: number): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) < min) throw new Error(`${name} must be an integer >= ${min}, got "${text}"`);
  return Number(text);
}

/** Longest help text: one message of 10 concatenated segments, as a send's `text` allows at most. */
const HELP_TEXT_MAX = 1530;

export function registerOptOutCommands(program: Command, action: Action, print: Print): void {
  // `token help-text`: on the token command cli/admin.ts declares before registering these.
  const token = program.commands.find((c) => c.name() === 'token') ?? program.command('token');
  token.command('help-text').description('the automatic reply to HELP/INFO sent to the numbers of an api_sms token (--clear: no reply)')
    .requiredOption('--token <value-or-id>').option('--text <text>').option('--clear')
    .action(action(async (ctx, o: { token: string; text?: string; clear?: boolean }) => {
      if (o.clear === (o.text !== undefined)) throw new Error('give either --text "..." or --clear');
      const text = o.text?.trim() ?? null;
      if (text !== null && (text.length === 0 || text.length > HELP_TEXT_MAX)) throw new Error(`--text must be 1 to ${HELP_TEXT_MAX} characters`);
      const { token: found } = await projectOf(ctx, o.token);
      const updated = await ctx.accounts.setHelpText(found.id, text);
      print(text === null ? `token ${updated.id}: no HELP reply` : `token ${updated.id}: HELP/INFO get "${text}"`, { id: updated.id, helpText: updated.helpText ?? null });
    }));

  const optOut = program.command('opt-out').description('the numbers opted out of a project (STOP), as GET/POST/DELETE /transactional/v1/opt-outs');
  optOut.command('list').description('list the project\'s opt-outs, sorted by number').requiredOption('--token <api_sms token>')
    .option('--start <n>', 'skip this many', '0').option('--limit <n>', 'at most this many', String(DEFAULT_LIST_LIMIT))
    .action(action(async (ctx, o: { token: string; start: string; limit: string }) => {
      const { project } = await projectOf(ctx, o.token);
      const entries = await new KvOptOutList(ctx.nats.kv.optouts).list(project, { start: count(o.start, '--start', 0), limit: count(o.limit, '--limit', 1) });
      print(entries.map((e) => `${e.number}  since ${e.since}  ${e.source}${e.keyword ? ` (${e.keyword})` : ''}`).join('\n') || '(none)', entries);
    }));
  optOut.command('add').description('opt a number out of the project').requiredOption('--token <api_sms token>').requiredOption('--number <+E.164>')
    .action(action(async (ctx, o: { token: string; number: string }) => {
      const { project } = await projectOf(ctx, o.token);
      const number = numberOf(o.number);
      const since = new Date().toISOString();
      await new KvOptOutList(ctx.nats.kv.optouts).optOut(project, number, since, 'api');
      print(`${number} opted out of project ${project}`, { number, since, source: 'api', project });
    }));
  optOut.command('remove').description('opt a number back into the project').requiredOption('--token <api_sms token>').requiredOption('--number <+E.164>')
    .action(action(async (ctx, o: { token: string; number: string }) => {
      const { project } = await projectOf(ctx, o.token);
      const number = numberOf(o.number);
      const removed = await new KvOptOutList(ctx.nats.kv.optouts).optIn(project, number);
      if (!removed) throw new Error(`${number} is not opted out of project ${project}`);
      print(`${number} opted back into project ${project}`, { number, project, removed: true });
    }));
}
