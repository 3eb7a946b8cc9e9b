// Admin CLI commands of the ingestion service: datasources and their specs (spec 2 §4).
// Registered on the admin program by cli/admin.ts.
import type { Command } from 'commander';
import { ATTRIBUTE_TYPES, CUSTOM_NAME, EVENT_TYPE, type AttributeType } from '../core/ingest';
import type { Provisioning } from '../core/provisioning/provisioning';
import type { AccountStore } from '../stores/account-store';
import { DatasourceStore } from '../stores/datasource-store';
import type { Nats } from '../infra/nats';

export interface IngestCommandContext {
  readonly nats: Nats;
  readonly accounts: AccountStore;
  /** The provisioning functions the admin API calls too (core/provisioning/provisioning.ts). */
  readonly provisioning: Provisioning;
}

type Action = <A extends unknown[]>(fn: (ctx: IngestCommandContext, ...args: A) => Promise<void>) => (...args: A) => Promise<void>;
type Print = (human: string, data: unknown) => void;

function attributeType(text: string): AttributeType {
  if (!(ATTRIBUTE_TYPES as readonly string[]).includes(text)) throw new Error(`--type must be one of ${ATTRIBUTE_TYPES.join(', ')}, got "${text}"`);
  return text as AttributeType;
}

function customName(text: string, what: string): string {
  if (!CUSTOM_NAME.test(text)) throw new Error(`${what} "${text}" is not valid: 1 to 64 letters, digits or underscores, starting with a letter`);
  return text;
}

export function registerIngestCommands(program: Command, action: Action, print: Print): void {

  const datasource = program.command('datasource').description('datasources of a project (ingestion, spec 2)');
  datasource.command('create').requiredOption('--project <id>').requiredOption('--name <name>').option('--strict', 'refuse names not in the specs')
    .action(action(async (ctx, o: { project: string; name: string; strict?: boolean }) => {
      const project = await ctx.accounts.getProject(o.project);
      const created = await ctx.provisioning.createDatasource(project.orgId, project.id, { name: o.name, strict: Boolean(o.strict) });
      print(`datasource ${created.id} created in project ${created.projectId}${created.strict ? ' (strict)' : ''}`, created);
    }));
  datasource.command('list').option('--project <id>').option('--org <id>').action(action(async (ctx, o: { project?: string; org?: string }) => {
    const found = await store(ctx).list({ ...(o.project ? { projectId: o.project } : {}), ...(o.org ? { orgId: o.org } : {}) });
    print(found.map((d) => `${d.id}  ${d.name}  project=${d.projectId}  strict=${d.strict}`).join('\n') || '(none)', found);
  }));
  datasource.command('show').requiredOption('--datasource <id>').action(action(async (ctx, o: { datasource: string }) => {
    const found = await store(ctx).get(o.datasource);
    print(JSON.stringify(found, null, 2), found);
  }));
  datasource.command('strict').description('make a datasource strict (unknown names are item errors) or not')
    .requiredOption('--datasource <id>').option('--enable').option('--disable')
    .action(action(async (ctx, o: { datasource: string; enable?: boolean; disable?: boolean }) => {
      if (Boolean(o.enable) === Boolean(o.disable)) throw new Error('give exactly one of --enable or --disable');
      const updated = await store(ctx).setStrict(o.datasource, Boolean(o.enable));
      print(`datasource ${updated.id} strict=${updated.strict}`, updated);
    }));
  datasource.command('rate-limit').description('grant a datasource its own requests-per-minute ceiling on one ingestion endpoint')
    .requiredOption('--datasource <id>').requiredOption('--endpoint <name>', 'ingest-contacts, ingest-events, ingest-delete, ingest-contact, ingest-stream or ingest-specs')
    .option('--per-minute <n>').option('--reset', 'back to the default')
    .action(action(async (ctx, o: { datasource: string; endpoint: string; perMinute?: string; reset?: boolean }) => {
      if (!['ingest-contacts', 'ingest-events', 'ingest-delete', 'ingest-contact', 'ingest-stream', 'ingest-specs'].includes(o.endpoint)) throw new Error(`unknown endpoint "${o.endpoint}"`);
      const perMinute = o.reset ? null : Number(o.perMinute);
      if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1)) throw new Error('give --per-minute <positive integer> or --reset');
      const updated = await store(ctx).setRateLimit(o.datasource, o.endpoint, perMinute);
      print(`rate limits of ${updated.id}: ${JSON.stringify(updated.rateLimits ?? {})}`, updated);
    }));

  const spec = program.command('spec').description('attribute and event specs of a datasource');
  spec.command('attribute').description('attribute specs').command('add').description('declare (or re-type) a custom attribute')
    .requiredOption('--datasource <id>').requiredOption('--name <name>').requiredOption('--type <type>', ATTRIBUTE_TYPES.join(' | '))
    .action(action(async (ctx, o: { datasource: string; name: string; type: string }) => {
      const declared = await store(ctx).declareAttribute(o.datasource, customName(o.name, 'attribute name'), attributeType(o.type));
      print(`attribute ${declared.name} (${declared.type}) declared on ${o.datasource}`, declared);
    }));
  spec.command('event').description('event specs').command('add').description('declare an event type and, optionally, typed parameters')
    .requiredOption('--datasource <id>').requiredOption('--type <eventType>')
    .option('--param <name:type...>', 'parameters, e.g. --param amount:number currency:string')
    .action(action(async (ctx, o: { datasource: string; type: string; param?: string[] }) => {
      if (!EVENT_TYPE.test(o.type)) throw new Error(`event type "${o.type}" is not valid: 1 to 64 letters, digits, "_" or "-", starting with a letter`);
      const parameters: Record<string, AttributeType> = {};
      for (const p of o.param ?? []) {
        const [name, type] = p.split(':');
        if (!name || !type) throw new Error(`--param "${p}" must be name:type`);
        parameters[customName(name, 'parameter name')] = attributeType(type);
      }
      const declared = await store(ctx).declareEventType(o.datasource, o.type, parameters);
      print(`event type ${declared.eventType} declared on ${o.datasource} with ${Object.keys(parameters).length} parameter(s)`, { ...declared, parameters });
    }));
}

function store(ctx: IngestCommandContext): DatasourceStore {
  return new DatasourceStore(ctx.nats.kv.accounts, ctx.accounts);
}
