// Datasources of the organization with their tokens and specs (spec 2): list, create (as
// `admin datasource create` does: DatasourceStore.create) and a datasource token for one (the
// new-token form of the projects page, its value shown once). The audience search is the
// builder's page (pages/audience-builder.ts).
import { ConsoleError, field, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { csrfField, html, notice, projectOptions, table, type Html } from '../html';
import { ownProject } from './audience-builder';
import { tokenRow } from './tokens';

const NAME_MAX = 100;

function createForm(ctx: Signed, projects: ReadonlyArray<{ id: string; name: string }>, error?: string): Html {
  return html`<form method="post" action="${ctx.base}/datasources" class="card" id="create-datasource">${csrfField(ctx)}<h2>New datasource</h2>${error ? notice('error', error) : ''}
<label>Name <input name="name" required maxlength="${NAME_MAX}" placeholder="e.g. Shop events"></label>
<label>Project <select name="project">${projectOptions(projects)}</select></label>
<label class="check"><input type="checkbox" name="strict" value="1"> strict: refuse attribute and event names not declared in its specs</label>
<button type="submit">Create datasource</button></form>`;
}

export function datasourceRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;

  const listPage = async (ctx: Signed, error?: string): Promise<Html> => {
    const [datasources, projects] = await Promise.all([services.datasources.list({ orgId: ctx.org.id }), services.accounts.listProjects(ctx.org.id)]);
    const projectName = (id: string): string => projects.find((p) => p.id === id)?.name ?? id;
    return html`${table(['Datasource', 'Id', 'Project', 'Strict', 'Created'], datasources.map((d) => html`<tr><td><a href="${ctx.base}/datasources/${d.id}">${d.name}</a></td>
<td><code>${d.id}</code></td><td>${projectName(d.projectId)}</td><td>${d.strict ? 'yes' : 'no'}</td><td>${d.createdAt}</td></tr>`))}${createForm(ctx, projects, error)}`;
  };

  router.get('/datasources', signed(routes, async (_req, res, ctx) => {
    send(res, ctx, 'Datasources', await listPage(ctx));
  }));

  router.post('/datasources', signed(routes, async (req, res, ctx) => {
    const project = await ownProject(routes, ctx, field(req, 'project'));
    const name = field(req, 'name');
    if (name.length === 0 || name.length > NAME_MAX) {
      send(res, ctx, 'Datasources', await listPage(ctx, `a datasource needs a name of 1 to ${NAME_MAX} characters`), 400);
      return;
    }
    const created = await services.datasources.create(project.id, name, { strict: field(req, 'strict') === '1' });
    req.log?.info({ datasource: created.id, project: project.id }, 'console: datasource created');
    res.redirect(303, `${ctx.base}/datasources/${created.id}`);
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
<section class="card"><h2>Tokens</h2>${table(['Token', 'Kind', 'Scopes', 'State', 'Created'], tokens.map((t) => tokenRow(ctx, t)))}
<form method="post" action="${ctx.base}/tokens" id="create-datasource-token">${csrfField(ctx)}<input type="hidden" name="kind" value="datasource">
<input type="hidden" name="project" value="${datasource.projectId}"><input type="hidden" name="datasource" value="${datasource.id}">
<label>New token for this datasource <input name="name" maxlength="100" placeholder="e.g. shop backend"></label> <button type="submit">Create datasource token</button>
<span class="meta">(its value is shown once)</span></form></section>
<section class="card"><h2>Attributes</h2>${table(['Name', 'Type', 'Source'], attributes.map((a) => html`<tr><td><code>${a.name}</code></td><td>${a.type}</td><td>${a.source}</td></tr>`))}</section>
<section class="card"><h2>Event types</h2>${table(['Event type', 'Parameters'], events.map((e) => html`<tr><td><code>${e.eventType}</code></td><td>${e.parameters.map((p) => html`<code>${p.name}</code>: ${p.type} `)}</td></tr>`))}</section>`);
  }));
}
