// Admin CLI commands of the audience filter (spec 3): a project's timezone and its segments.
// Registered on the admin program by cli/admin.ts.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ALL_SEGMENT, saveSegment } from '../core/filters/grammar-b';
import type { Nats } from '../infra/nats';
import type { AccountStore } from '../stores/account-store';
import { SegmentStore } from '../stores/segment-store';

export interface AudienceCommandContext {
  readonly nats: Nats;
  readonly accounts: AccountStore;
}

type Action = <A extends unknown[]>(fn: (ctx: AudienceCommandContext, ...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Print = (human: string, data: unknown) => void;

/** An IANA name Node (and ClickHouse, which uses the same tz database) knows. */
export function checkTimezone(name: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    throw new Error(`"${name}" is not an IANA timezone such as Europe/Berlin or UTC`);
  }
  return name;
}

async function storeSegment(ctx: AudienceCommandContext, project: string, body: unknown): Promise<{ created: boolean; slug: string }> {
  await ctx.accounts.getProject(project);
  const { segment, created } = await saveSegment(new SegmentStore(ctx.nats.kv.accounts), project, body, new Date());
  return { created, slug: segment.slug };
}

export function registerAudienceCommands(program: Command, action: Action, print: Print): void {
  const project = program.commands.find((c) => c.name() === 'project') ?? program.command('project');
  project.command('timezone').description('set the project timezone of the audience filter (whole days, roundings, anniversaries)')
    .requiredOption('--project <id>').requiredOption('--timezone <IANA name>', 'e.g. Europe/Berlin; UTC by default')
    .action(action(async (ctx, o: { project: string; timezone: string }) => {
      const updated = await ctx.accounts.setProjectTimezone(o.project, checkTimezone(o.timezone));
      print(`project ${updated.id} timezone=${updated.timezone ?? 'UTC'}`, updated);
    }));

  const segment = program.command('segment').description(`stored audience filters of a project (spec 3 §2.4 rule 3; "${ALL_SEGMENT}" is built in)`);
  segment.command('create').description('create or replace a segment from a JSON file or text: { slug, name?, root }')
    .requiredOption('--project <id>').option('--file <path>').option('--body <json>')
    .action(action(async (ctx, o: { project: string; file?: string; body?: string }) => {
      if (Boolean(o.file) === Boolean(o.body)) throw new Error('give exactly one of --file or --body');
      const text = o.file ? readFileSync(o.file, 'utf8') : String(o.body);
      const { created, slug } = await storeSegment(ctx, o.project, JSON.parse(text) as unknown);
      print(`segment ${slug} ${created ? 'created' : 'replaced'} in project ${o.project}`, { slug, created });
    }));
  segment.command('list').requiredOption('--project <id>').action(action(async (ctx, o: { project: string }) => {
    const found = await new SegmentStore(ctx.nats.kv.accounts).list(o.project);
    print(found.map((s) => `${s.slug}  ${s.name}  updated ${s.updatedAt}`).join('\n') || '(none)', found);
  }));
  segment.command('show').requiredOption('--project <id>').requiredOption('--slug <slug>').action(action(async (ctx, o: { project: string; slug: string }) => {
    const found = await new SegmentStore(ctx.nats.kv.accounts).get(o.project, o.slug);
    if (!found) throw new Error(`no segment ${o.slug} in project ${o.project}`);
    print(JSON.stringify(found, null, 2), found);
  }));
  segment.command('delete').requiredOption('--project <id>').requiredOption('--slug <slug>').action(action(async (ctx, o: { project: string; slug: string }) => {
    if (!(await new SegmentStore(ctx.nats.kv.accounts).remove(o.project, o.slug))) throw new Error(`no segment ${o.slug} in project ${o.project}`);
    print(`segment ${o.slug} deleted`, { slug: o.slug, deleted: true });
  }));
}
