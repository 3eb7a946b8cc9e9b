// The audience builder (spec 3 §2.3, §2.4): a visual editor of a Grammar B filter over one
// project — groups joined with and/or, attribute conditions, event groups with their parameter
// conditions, segment conditions — beside the same filter as JSON, each redrawing the other
// (assets/builder.js). A live count (POST /audience/count, JSON) and the results (POST /audience)
// run the search the audience API runs (services.audience, stores/audience-search.ts).
import type { Response } from 'express';
import type { Project } from '../../../../core/accounts';
import { AppError, ERRORS } from '../../../../core/errors';
import { ALL_SEGMENT, parseSearch, SEARCHES_IN_FLIGHT_PER_ORG } from '../../../../core/filters/grammar-b';
import { NEGATABLE } from '../../../../core/filters/grammar-b/ast';
import { NATIVE_ATTRIBUTES, NATIVE_EVENT_ATTRIBUTES, OPERATOR_TYPES } from '../../../../core/filters/grammar-b/fields';
import type { AttributeType } from '../../../../core/ingest/types';
import type { SearchResult } from '../../../../stores/audience-search';
import { InFlight } from '../../rate-limit';
import { ConsoleError, field, queryParam, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { csrfField, html, notice, projectOptions, table } from '../html';

export const FILTER_MAX_CHARS = 20_000;
const RESULT_ROWS = 50;
const DEFAULT_COLUMNS = ['_user_id', '_first_name', '_last_name', '_email', '_phone_mobile'];
const EXAMPLE = { version: '0.0.1', root: { type: 'group', join: 'and', children: [{ type: 'attribute_condition', key: '_email', operator: 'exists', values: [] }] }, limit: RESULT_ROWS };

/** The project of the form or path, when it is this organization's; otherwise a 404. */
export async function ownProject(routes: ConsoleRoutes, ctx: Signed, id: string): Promise<Project> {
  const project = (await routes.services.accounts.listProjects(ctx.org.id)).find((p) => p.id === id);
  if (!project) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such project in this organization');
  return project;
}

/** The audience search of this process, or a 404 page when it is not served here. */
export function audienceOf(routes: ConsoleRoutes): NonNullable<ConsoleRoutes['services']['audience']> {
  const { audience } = routes.services;
  if (!audience) throw new ConsoleError('CONSOLE_NOT_FOUND', 'the audience search is not served by this process');
  return audience;
}

/** Field types of the builder: those of core/filters/grammar-b/fields.ts. */
const SPEC_TYPE: Record<AttributeType, string> = { string: 'string', number: 'number', boolean: 'bool', date: 'date', array: 'strings', object: 'custom', geopoint: 'geo' };

interface Catalog {
  readonly attributes: ReadonlyArray<{ key: string; type: string }>;
  readonly events: ReadonlyArray<{ type: string; parameters: ReadonlyArray<{ key: string; type: string }> }>;
  readonly eventNative: ReadonlyArray<{ key: string; type: string; dayversary: boolean }>;
  readonly operators: ReadonlyArray<{ op: string; types: readonly string[]; negatable: boolean }>;
  readonly segments: readonly string[];
}

/** What the builder offers for a project: attributes and event types from its datasources' specs, operators by type, segments. */
async function catalog(routes: ConsoleRoutes, ctx: Signed, project: Project): Promise<Catalog> {
  const { services } = routes;
  const datasources = (await services.datasources.list({ orgId: ctx.org.id })).filter((d) => d.projectId === project.id);
  const attributes = new Map(Object.entries(NATIVE_ATTRIBUTES).map(([key, f]) => [key, f.type as string]));
  const events = new Map<string, Map<string, string>>();
  for (const d of datasources) {
    for (const a of services.specs.attributes(d.id)) if (!attributes.has(a.name)) attributes.set(a.name, SPEC_TYPE[a.type]);
    for (const e of services.specs.eventTypes(d.id)) {
      const params = events.get(e.eventType) ?? new Map<string, string>();
      for (const p of e.parameters) if (!params.has(p.name)) params.set(p.name, SPEC_TYPE[p.type]);
      events.set(e.eventType, params);
    }
  }
  const segments = services.segments ? (await services.segments.list(project.id)).map((s) => s.slug) : [];
  return {
    attributes: [...attributes].map(([key, type]) => ({ key, type })),
    events: [...events].sort(([a], [b]) => a.localeCompare(b)).map(([type, params]) => ({ type, parameters: [...params].map(([key, t]) => ({ key, type: t })) })),
    eventNative: Object.entries(NATIVE_EVENT_ATTRIBUTES).map(([key, f]) => ({ key, type: f.type, dayversary: f.dayversary === true })),
    operators: Object.entries(OPERATOR_TYPES).filter(([op]) => op !== 'match-all' && op !== 'match-none')
      .map(([op, types]) => ({ op, types, negatable: NEGATABLE.has(op as Parameters<typeof NEGATABLE.has>[0]) })),
    segments: [ALL_SEGMENT, ...segments.filter((s) => s !== ALL_SEGMENT)],
  };
}

/** The filter text as an audience filter object (400 when it is not JSON). */
export function filterObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError('INVALID_FILTER', 'the audience filter is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('INVALID_FILTER', 'the audience filter is a JSON object (spec 3 §2.3)');
  return body as Record<string, unknown>;
}

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export interface BuilderState {
  readonly project?: Project;
  readonly filter?: string;
  readonly columns?: readonly string[];
  readonly segment?: { readonly slug: string; readonly name: string };
  readonly result?: SearchResult;
  readonly error?: string;
}

/** The builder page: project, tree, JSON, live count, columns, search, save as segment; then the results. */
export async function builderPage(routes: ConsoleRoutes, res: Response, ctx: Signed, state: BuilderState, status = 200): Promise<void> {
  const projects = await routes.services.accounts.listProjects(ctx.org.id);
  const project = state.project ?? projects[0];
  if (!project) {
    send(res, ctx, 'Audience', html`<p class="empty">No project yet: create one with the admin CLI.</p>`);
    return;
  }
  const found = await catalog(routes, ctx, project);
  const columns = state.columns && state.columns.length > 0 ? state.columns : DEFAULT_COLUMNS;
  const filter = state.filter ?? JSON.stringify(EXAMPLE, null, 2);
  const results = state.result ? html`<section class="card" id="audience-results"><p id="audience-total">${state.result.total} contact(s) match; the first ${Math.min(state.result.entities.length, RESULT_ROWS)}:</p>
${table(columns, state.result.entities.slice(0, RESULT_ROWS).map((e) => html`<tr data-user-id="${cell(e['_user_id'])}">${columns.map((c, i) => (i === 0
    ? html`<td><a href="${ctx.base}/projects/${project.id}/contacts/${cell(e['_audience_id'])}">${cell(e[c]) || '(open)'}</a></td>`
    : html`<td>${cell(e[c])}</td>`))}</tr>`), '(none)')}</section>` : '';
  send(res, ctx, 'Audience', html`${state.error ? notice('error', state.error) : ''}
<form method="post" action="${ctx.base}/audience" class="card builder" id="builder-form" data-count-url="${ctx.base}/audience/count" data-catalog="${JSON.stringify(found)}">${csrfField(ctx)}
<p><label>Project <select name="project" id="builder-project" data-href="${ctx.base}/audience?project=">${projectOptions(projects, project.id)}</select></label>
<a href="${ctx.base}/segments?project=${project.id}">Segments of this project</a></p>
<div class="builder-grid"><div id="builder-tree" class="builder-tree" aria-label="Filter builder"><p class="meta">The visual builder needs JavaScript; the JSON filter works without it.</p></div>
<label class="builder-json">Audience filter (Grammar B, spec 3 §2.3) <textarea name="filter" rows="24" spellcheck="false" id="audience-filter" maxlength="${FILTER_MAX_CHARS}">${filter}</textarea>
<span id="builder-json-error" class="bad" role="alert"></span></label></div>
<p id="builder-count" class="builder-count" aria-live="polite"></p>
<details><summary>Columns of the results</summary><p>${found.attributes.map((a) => html`<label class="check"><input type="checkbox" name="columns" value="${a.key}"${columns.includes(a.key) ? html` checked` : ''}> ${a.key}</label> `)}</p></details>
<p><button type="submit">Search</button></p>
<fieldset id="save-segment"><legend>Save the filter's root as a segment</legend>
<label>Slug <input name="slug" maxlength="64" value="${state.segment?.slug ?? ''}" placeholder="e.g. gold-customers"></label>
<label>Name <input name="name" maxlength="200" value="${state.segment?.name ?? ''}"></label>
<button type="submit" formaction="${ctx.base}/segments">Save as segment</button></fieldset>
</form>${results}`, status, { scripts: ['builder.js'], styles: ['builder.css'] });
}

/** Checked columns of the results form (a repeated field is an array). */
function columnsOf(body: unknown): string[] {
  const raw = (body as Record<string, unknown> | undefined)?.['columns'];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((c): c is string => typeof c === 'string' && c.length > 0 && c.length <= 64).slice(0, 40);
}

export function audienceBuilderRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;
  // The console's searches count apart from the API's, with the same bound per organization.
  const inFlight = new InFlight(SEARCHES_IN_FLIGHT_PER_ORG, 'audience searches');

  router.get('/audience', signed(routes, async (req, res, ctx) => {
    audienceOf(routes);
    const projectId = queryParam(req, 'project');
    const project = projectId ? await ownProject(routes, ctx, projectId) : undefined;
    const slug = queryParam(req, 'segment');
    if (!slug || !project) {
      await builderPage(routes, res, ctx, project ? { project } : {});
      return;
    }
    const segment = await services.segments?.get(project.id, slug);
    if (!segment) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such segment in this project');
    const filter = JSON.stringify({ version: '0.0.1', root: segment.root, limit: RESULT_ROWS }, null, 2);
    await builderPage(routes, res, ctx, { project, filter, segment: { slug: segment.slug, name: segment.name } });
  }));

  router.post('/audience', signed(routes, async (req, res, ctx) => {
    const audience = audienceOf(routes);
    const project = await ownProject(routes, ctx, field(req, 'project'));
    const filter = field(req, 'filter').slice(0, FILTER_MAX_CHARS);
    const state = { project, filter, columns: columnsOf(req.body), segment: { slug: field(req, 'slug'), name: field(req, 'name') } };
    const release = inFlight.take(ctx.org.id, res);
    try {
      const result = await audience.search(parseSearch(filterObject(filter)), { project: project.id, timezone: project.timezone ?? 'UTC', now: new Date() });
      await builderPage(routes, res, ctx, { ...state, result });
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== ERRORS.CONSOLE_BAD_REQUEST.status) throw err;
      await builderPage(routes, res, ctx, { ...state, error: err.message }, 400);
    } finally {
      release();
    }
  }));

  // The live count: the same search with one row, answered as JSON (a problem body when refused).
  router.post('/audience/count', signed(routes, async (req, res, ctx) => {
    const problem = (status: number, title: string, detail: string): void => { res.status(status).json({ title, status, detail }); };
    const audience = services.audience;
    const project = (await services.accounts.listProjects(ctx.org.id)).find((p) => p.id === field(req, 'project'));
    if (!audience || !project) { problem(404, 'Not found', 'no such project in this organization'); return; }
    let release: (() => void) | undefined;
    try {
      const body = filterObject(field(req, 'filter').slice(0, FILTER_MAX_CHARS));
      const { aggregations: _aggregations, cursor: _cursor, offset: _offset, ...rest } = body;
      release = inFlight.take(ctx.org.id, res);
      const result = await audience.search(parseSearch({ ...rest, limit: 1 }), { project: project.id, timezone: project.timezone ?? 'UTC', now: new Date() });
      res.json({ total: result.total });
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      problem(err.status, err.status === ERRORS.RATE_LIMITED.status ? 'Too many searches' : 'Invalid filter', err.message);
    } finally {
      release?.();
    }
  }));
}
