// Datasources of the organization with their tokens and specs (spec 2), and the audience
// search box taking a Grammar B filter (spec 3 §2.3; the same search the audience API runs).
import { AppError } from '../../../../core/errors';
import { parseSearch } from '../../../../core/filters/grammar-b';
import { ConsoleError, field, send, signed, type ConsoleRoutes } from '../handler';
import { csrfField, html, notice, table } from '../html';
import { tokenRow } from './tokens';

const EXAMPLE = JSON.stringify({ version: '0.0.1', root: { type: 'group', join: 'and', children: [{ type: 'attribute_condition', key: '_email', operator: 'exists', values: [] }] }, limit: 20 }, null, 2);

export function datasourceRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;

  router.get('/datasources', signed(routes, async (_req, res, ctx) => {
    const [datasources, projects] = await Promise.all([services.datasources.list({ orgId: ctx.org.id }), services.accounts.listProjects(ctx.org.id)]);
    const projectName = (id: string): string => projects.find((p) => p.id === id)?.name ?? id;
    send(res, ctx, 'Datasources', table(['Datasource', 'Id', 'Project', 'Strict', 'Created'], datasources.map((d) => html`<tr><td><a href="${ctx.base}/datasources/${d.id}">${d.name}</a></td>
<td><code>${d.id}</code></td><td>${projectName(d.projectId)}</td><td>${d.strict ? 'yes' : 'no'}</td><td>${d.createdAt}</td></tr>`)));
  }));

  router.get('/datasources/:id', signed(routes, async (req, res, ctx) => {
    const id = String(req.params['id']);
    const datasource = (await services.datasources.list({ orgId: ctx.org.id })).find((d) => d.id === id);
    if (!datasource) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such datasource in this organization');
    const tokens = (await services.accounts.listTokens({ orgId: ctx.org.id })).filter((t) => t.datasourceId === id);
    const attributes = services.specs.attributes(id);
    const events = services.specs.eventTypes(id);
    send(res, ctx, `Datasource ${datasource.name}`, html`<section class="card"><dl><dt>Id</dt><dd><code>${datasource.id}</code></dd><dt>Project</dt><dd><code>${datasource.projectId}</code></dd>
<dt>Strict</dt><dd>${datasource.strict ? 'yes: undeclared names are refused' : 'no: new names are inferred'}</dd></dl></section>
<section class="card"><h2>Tokens</h2>${table(['Token', 'Kind', 'Scopes', 'State', 'Created'], tokens.map((t) => tokenRow(ctx, t)))}</section>
<section class="card"><h2>Attributes</h2>${table(['Name', 'Type', 'Source'], attributes.map((a) => html`<tr><td><code>${a.name}</code></td><td>${a.type}</td><td>${a.source}</td></tr>`))}</section>
<section class="card"><h2>Event types</h2>${table(['Event type', 'Parameters'], events.map((e) => html`<tr><td><code>${e.eventType}</code></td><td>${e.parameters.map((p) => html`<code>${p.name}</code>: ${p.type} `)}</td></tr>`))}</section>`);
  }));

  const audiencePage = async (ctx: Parameters<Parameters<typeof signed>[1]>[2], project: string, filter: string, result?: string | { total: number; rows: Record<string, unknown>[] }): Promise<ReturnType<typeof html>> => {
    const projects = await services.accounts.listProjects(ctx.org.id);
    const body = typeof result === 'string' ? notice('error', result)
      : result ? html`<p id="audience-total">${result.total} contact(s) match; the first ${result.rows.length}:</p>${table(['Contact'], result.rows.map((r) => html`<tr><td><pre>${JSON.stringify(r, null, 1)}</pre></td></tr>`))}` : '';
    return html`<form method="post" action="${ctx.base}/audience" class="card">${csrfField(ctx)}
<label>Project <select name="project">${projects.map((p) => html`<option value="${p.id}"${p.id === project ? html` selected` : ''}>${p.name}</option>`)}</select></label>
<label>Audience filter (Grammar B, spec 3 §2.3) <textarea name="filter" rows="10" spellcheck="false" id="audience-filter">${filter}</textarea></label>
<button type="submit">Search</button></form>${body}`;
  };

  router.get('/audience', signed(routes, async (_req, res, ctx) => {
    if (!services.audience) throw new ConsoleError('CONSOLE_NOT_FOUND', 'the audience search is not served by this process');
    send(res, ctx, 'Audience', await audiencePage(ctx, '', EXAMPLE));
  }));

  router.post('/audience', signed(routes, async (req, res, ctx) => {
    if (!services.audience) throw new ConsoleError('CONSOLE_NOT_FOUND', 'the audience search is not served by this process');
    const projectId = field(req, 'project');
    const filter = field(req, 'filter').slice(0, 20_000);
    const project = (await services.accounts.listProjects(ctx.org.id)).find((p) => p.id === projectId);
    if (!project) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such project in this organization');
    let result: string | { total: number; rows: Record<string, unknown>[] };
    try {
      let body: unknown;
      try { body = JSON.parse(filter); } catch { throw new AppError('INVALID_FILTER', 'the audience filter is not valid JSON'); }
      const found = await services.audience.search(parseSearch(body), { project: project.id, timezone: project.timezone ?? 'UTC', now: new Date() });
      result = { total: found.total, rows: found.entities.slice(0, 50) };
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== 400) throw err;
      result = err.message;
    }
    send(res, ctx, 'Audience', await audiencePage(ctx, project.id, filter, result), typeof result === 'string' ? 400 : 200);
  }));
}
