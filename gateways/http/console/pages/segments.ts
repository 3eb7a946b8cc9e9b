// Segments of the organization's projects (spec 3 §2.4 rule 3): listed per project, opened in
// the audience builder to edit, saved from it (the filter's root), deleted. Stored with the
// segment store of the audience API, checked by the same saveSegment as POST /segments.
import { AppError, ERRORS } from '../../../../core/errors';
import { saveSegment } from '../../../../core/filters/grammar-b';
import { ConsoleError, field, queryParam, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { html, notice, postButton, table, time } from '../html';
import { builderPage, FILTER_MAX_CHARS, filterObject, ownProject } from './audience-builder';

type Segments = NonNullable<ConsoleRoutes['services']['segments']>;

function segmentsOf(routes: ConsoleRoutes): Segments {
  const { segments } = routes.services;
  if (!segments) throw new ConsoleError('CONSOLE_NOT_FOUND', 'segments are not served by this process');
  return segments;
}

export function segmentRoutes(routes: ConsoleRoutes): void {
  const { router } = routes;

  router.get('/segments', signed(routes, async (req, res, ctx: Signed) => {
    const segments = segmentsOf(routes);
    const only = queryParam(req, 'project');
    const projects = only ? [await ownProject(routes, ctx, only)] : await routes.services.accounts.listProjects(ctx.org.id);
    const saved = queryParam(req, 'saved');
    const sections = await Promise.all(projects.map(async (p) => {
      const list = await segments.list(p.id);
      return html`<section class="card segments" data-project="${p.id}"><h2>${p.name}</h2><p><a href="${ctx.base}/audience?project=${p.id}">New segment in the audience builder</a></p>
${table(['Segment', 'Name', 'Updated', ''], list.map((s) => html`<tr data-slug="${s.slug}"><td><a href="${ctx.base}/audience?project=${p.id}&amp;segment=${s.slug}"><code>${s.slug}</code></a></td>
<td>${s.name}</td><td>${time(s.updatedAt)}</td><td>${postButton(ctx, `${ctx.base}/segments/delete`, 'Delete', { project: p.id, slug: s.slug }, `Delete the segment ${s.slug}? Filters that refer to it will match no one.`)}</td></tr>`))}</section>`;
    }));
    send(res, ctx, 'Segments', html`${saved ? notice('ok', html`Segment <code>${saved}</code> saved.`) : ''}${sections}`);
  }));

  router.post('/segments', signed(routes, async (req, res, ctx) => {
    const segments = segmentsOf(routes);
    const project = await ownProject(routes, ctx, field(req, 'project'));
    const filter = field(req, 'filter').slice(0, FILTER_MAX_CHARS);
    const slug = field(req, 'slug');
    const name = field(req, 'name').slice(0, 200);
    try {
      const body = filterObject(filter);
      if (body['root'] === undefined) throw new AppError('INVALID_FILTER', 'the filter has no root to save (spec 3 §2.3)');
      const { created } = await saveSegment(segments, project.id, { slug, ...(name ? { name } : {}), root: body['root'] }, new Date());
      req.log?.info({ project: project.id, slug, created }, 'console: segment saved');
      res.redirect(303, `${ctx.base}/segments?project=${encodeURIComponent(project.id)}&saved=${encodeURIComponent(slug)}`);
    } catch (err) {
      if (!(err instanceof AppError) || err.status !== ERRORS.CONSOLE_BAD_REQUEST.status) throw err;
      await builderPage(routes, res, ctx, { project, filter, segment: { slug, name }, error: `The segment is not saved: ${err.message}` }, 400);
    }
  }));

  router.post('/segments/delete', signed(routes, async (req, res, ctx) => {
    const segments = segmentsOf(routes);
    const project = await ownProject(routes, ctx, field(req, 'project'));
    if (!(await segments.remove(project.id, field(req, 'slug')))) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such segment in this project');
    req.log?.info({ project: project.id, slug: field(req, 'slug') }, 'console: segment deleted');
    res.redirect(303, `${ctx.base}/segments?project=${encodeURIComponent(project.id)}`);
  }));
}
