// A project's opt-out list (DESIGN §4 "Two-way"): search, add, remove, through the list behind
// GET/POST/DELETE /transactional/v1/opt-outs (deps.services.optOuts, core/sms/opt-out.ts), a
// number checked as a send's `to` (core/sms/phone.ts).
import { checkPhoneNumber, type OptOutEntry, type OptOutList } from '../../../../core/sms';
import { ConsoleError, field, queryParam, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { csrfField, html, notice, postButton, projectOptions, table, time } from '../html';
import { ownProject } from './audience-builder';

const PAGE = 50;
/** A search reads at most this many entries of the list (one read: each read lists the bucket's keys). */
const SEARCH_SCAN = 5_000;

function listOf(routes: ConsoleRoutes): OptOutList {
  const list = routes.deps.services.optOuts;
  if (!list) throw new ConsoleError('CONSOLE_NOT_FOUND', 'the opt-out lists are not served by this process');
  return list;
}

/** Entries whose number holds `q` (its digits, `+` ignored), from `start`, at most PAGE. */
async function search(list: OptOutList, project: string, q: string, start: number): Promise<{ entries: OptOutEntry[]; more: boolean; scanned: number }> {
  const digits = q.replace(/[^0-9]/g, '');
  if (!digits) {
    const entries = await list.list(project, { start, limit: PAGE + 1 });
    return { entries: entries.slice(0, PAGE), more: entries.length > PAGE, scanned: 0 };
  }
  const read = await list.list(project, { start: 0, limit: SEARCH_SCAN });
  const found = read.filter((e) => e.number.includes(digits));
  return { entries: found.slice(start, start + PAGE), more: found.length > start + PAGE, scanned: read.length };
}

export function optOutRoutes(routes: ConsoleRoutes): void {
  const { router } = routes;

  const listPage = async (ctx: Signed, projectId: string, q: string, start: number, message?: { kind: 'ok' | 'error'; text: string }): Promise<ReturnType<typeof html>> => {
    const project = await ownProject(routes, ctx, projectId);
    const projects = await routes.services.accounts.listProjects(ctx.org.id);
    const { entries, more, scanned } = await search(listOf(routes), project.id, q, start);
    const at = `${ctx.base}/opt-outs`;
    const next = more ? html`<p><a href="${at}?${new URLSearchParams({ project: project.id, q, start: String(start + PAGE) }).toString()}">Next ${PAGE}</a></p>` : '';
    return html`${message ? notice(message.kind, message.text) : ''}
<form method="get" action="${at}" class="card filter" id="opt-out-search"><label>Project <select name="project">${projectOptions(projects, project.id)}</select></label>
<label>Number contains <input name="q" value="${q}" maxlength="20" inputmode="tel" placeholder="e.g. 49151"></label> <button type="submit">Search</button></form>
<form method="post" action="${at}" class="card" id="opt-out-add">${csrfField(ctx)}<input type="hidden" name="project" value="${project.id}">
<label>Opt out a number <input name="to" required maxlength="20" placeholder="+4915112345678"></label> <button type="submit">Add to the opt-out list</button>
<p class="meta">Sends to a number on the list are refused (spec 1 §6); an inbound STOP adds one, START removes it.</p></form>
<section class="card"><h2>${project.name}: opted-out numbers</h2>${scanned >= SEARCH_SCAN ? html`<p class="meta">The search read the first ${SEARCH_SCAN} numbers of the list.</p>` : ''}
${table(['Number', 'Since', 'Source', ''], entries.map((e) => html`<tr data-number="${e.number}"><td><code>${e.number}</code></td><td>${time(e.since)}</td><td>${e.source}${e.keyword ? html` (${e.keyword})` : ''}</td>
<td>${postButton(ctx, `${at}/remove`, 'Remove', { project: project.id, number: e.number }, `Remove ${e.number} from the opt-out list? Sends to it will be accepted again.`)}</td></tr>`))}${next}</section>`;
  };

  router.get('/opt-outs', signed(routes, async (req, res, ctx) => {
    const query = (name: string): string => queryParam(req, name).trim();
    const projectId = query('project') || (await routes.services.accounts.listProjects(ctx.org.id))[0]?.id;
    if (!projectId) { send(res, ctx, 'Opt-outs', html`<p class="empty">No project yet.</p>`); return; }
    const start = Math.max(0, Math.min(SEARCH_SCAN, Number.parseInt(query('start'), 10) || 0));
    send(res, ctx, 'Opt-outs', await listPage(ctx, projectId, query('q').slice(0, 20), start));
  }));

  router.post('/opt-outs', signed(routes, async (req, res, ctx) => {
    const project = await ownProject(routes, ctx, field(req, 'project'));
    const phone = checkPhoneNumber(field(req, 'to'));
    if (!phone.ok) {
      send(res, ctx, 'Opt-outs', await listPage(ctx, project.id, '', 0, { kind: 'error', text: `The number is refused: ${phone.message}` }), 400);
      return;
    }
    await listOf(routes).optOut(project.id, phone.normalized, new Date().toISOString(), 'api');
    req.log?.info({ project: project.id }, 'console: number opted out');
    res.redirect(303, `${ctx.base}/opt-outs?${new URLSearchParams({ project: project.id, q: phone.normalized }).toString()}`);
  }));

  router.post('/opt-outs/remove', signed(routes, async (req, res, ctx) => {
    const project = await ownProject(routes, ctx, field(req, 'project'));
    const phone = checkPhoneNumber(field(req, 'number'));
    const removed = phone.ok ? await listOf(routes).optIn(project.id, phone.normalized) : false;
    if (!removed) throw new ConsoleError('CONSOLE_NOT_FOUND', 'that number is not on this project\'s opt-out list');
    req.log?.info({ project: project.id }, 'console: number opted back in');
    res.redirect(303, `${ctx.base}/opt-outs?${new URLSearchParams({ project: project.id }).toString()}`);
  }));
}
