// A contact of a project's audience: its attributes (the search's contact, spec 3 §4.2, found by
// `filterAudienceIds`), the datasources that hold it and its recent events (spec 2 §2.2).
import { parseSearch } from '../../../../core/filters/grammar-b';
import { ConsoleError, send, signed, type ConsoleRoutes } from '../handler';
import { html, table, time } from '../html';
import { audienceOf, ownProject } from './audience-builder';

const RECENT_EVENTS = 20;
const AUDIENCE_ID = /^[A-Za-z0-9_-]{1,128}$/;

const shown = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

export function contactRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;

  router.get('/projects/:project/contacts/:audience', signed(routes, async (req, res, ctx) => {
    const audience = audienceOf(routes);
    const project = await ownProject(routes, ctx, String(req.params['project']));
    const audienceId = String(req.params['audience']);
    if (!AUDIENCE_ID.test(audienceId)) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such contact in this project');
    const scope = { project: project.id, timezone: project.timezone ?? 'UTC', now: new Date() };
    const [found, events, datasources] = await Promise.all([
      audience.search(parseSearch({ version: '0.0.1', filterAudienceIds: [audienceId], limit: 1 }), scope),
      services.contactEvents ? services.contactEvents.recent(project.id, audienceId, RECENT_EVENTS) : Promise.resolve([]),
      services.datasources.list({ orgId: ctx.org.id }),
    ]);
    const contact = found.entities[0];
    if (!contact) throw new ConsoleError('CONSOLE_NOT_FOUND', 'no such contact in this project');
    const held = Array.isArray(contact['_datasource_ids']) ? (contact['_datasource_ids'] as unknown[]).map(String) : [];
    const nameOf = (id: string): string => datasources.find((d) => d.id === id)?.name ?? id;
    const attributes = Object.entries(contact).filter(([k, v]) => k !== '_datasource_ids' && v !== null && !(Array.isArray(v) && v.length === 0));
    send(res, ctx, `Contact ${shown(contact['_user_id'])}`, html`<p class="meta">project <a href="${ctx.base}/audience?project=${project.id}">${project.name}</a> · audience id <code>${audienceId}</code></p>
<section class="card" id="contact-attributes"><h2>Attributes</h2>${table(['Attribute', 'Value'], attributes.map(([k, v]) => html`<tr><td><code>${k}</code></td><td>${shown(v)}</td></tr>`))}</section>
<section class="card" id="contact-datasources"><h2>Datasources</h2><ul>${held.map((id) => html`<li><a href="${ctx.base}/datasources/${id}">${nameOf(id)}</a> <code>${id}</code></li>`)}</ul></section>
<section class="card" id="contact-events"><h2>Recent events</h2>${table(['Date', 'Type', 'Event id', 'Datasource', 'Parameters'], events.map((e) => html`<tr><td>${time(e.eventDate)}</td><td><code>${e.eventType}</code></td>
<td><code>${e.eventId}</code></td><td>${nameOf(e.datasourceId)}</td><td><code>${JSON.stringify(e.parameters)}</code></td></tr>`))}</section>`);
  }));
}
