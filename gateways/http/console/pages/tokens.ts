// Projects and their tokens: list, create (the value shown once, never stored), rotate (a
// replacement, its value shown once) and revoke, with each token's kind and scopes.
import type { Request, Response } from 'express';
import { PRODUCT_SCOPES, TOKEN_KINDS, type Token, type TokenKind } from '../../../../core/accounts';
import { ConsoleError, field, ownToken, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { csrfField, html, notice, postButton, projectOptions, table, type Html } from '../html';
import { tokenSettings } from './token-settings';

export function tokenRow(ctx: Signed, t: Token): Html {
  return html`<tr><td><a href="${ctx.base}/tokens/${t.id}">${t.name}</a></td><td>${t.kind}</td><td>${t.scopes.join(', ')}</td>
<td>${t.revokedAt ? html`<span class="bad">revoked</span>` : html`<span class="good">active</span>`}</td><td>${t.createdAt}</td></tr>`;
}

/** What was typed into the new-token form, kept when it is refused. */
interface TokenForm {
  readonly name: string;
  readonly kind: string;
  readonly project: string;
  readonly datasource: string;
  readonly scopes: readonly string[];
}

const selected = (on: boolean): Html | string => (on ? html` selected` : '');

/**
 * The new-token form. Its defaults make a valid token (an api_sms token of the first project);
 * a refused form comes back with what was typed and the reason.
 */
function createForm(ctx: Signed, projects: ReadonlyArray<{ id: string; name: string }>, input?: TokenForm, error?: string): Html {
  const kind = input?.kind ?? TOKEN_KINDS[0];
  const project = input?.project ?? projects[0]?.id ?? '';
  const options = projects.length === 0
    ? html`<option value="">(no project yet: only legacy tokens)</option>`
    : projectOptions(projects, project);
  return html`<form method="post" action="${ctx.base}/tokens" class="card" id="create-token">${csrfField(ctx)}
<h2>New token</h2>${error ? notice('error', error) : ''}
<label>Name <input name="name" maxlength="100" placeholder="e.g. checkout service" value="${input?.name ?? ''}"></label>
<label>Kind <select name="kind">${TOKEN_KINDS.map((k) => html`<option value="${k}"${selected(k === kind)}>${k}</option>`)}</select></label>
<label>Project <select name="project">${options}</select> <span class="meta">(legacy tokens are account-wide: the project is ignored)</span></label>
<label>Datasource id <input name="datasource" placeholder="datasource tokens only" value="${input?.datasource ?? ''}"></label>
<fieldset><legend>Scopes (product tokens)</legend>${PRODUCT_SCOPES.map((s) => html`<label class="check"><input type="checkbox" name="scope_${s}" value="1"${input?.scopes.includes(s) ? html` checked` : ''}> ${s}</label>`)}</fieldset>
<button type="submit">Create token</button></form>`;
}

/** The page that shows a token value, the only time it is shown. */
function valueOnce(ctx: Signed, title: string, token: Token, value: string, extra: Html | string = ''): Html {
  return html`${notice('secret', html`<p>Copy the value now: it is shown once and stored only as a hash.</p>
<p><code id="token-value" class="secret">${value}</code> <button type="button" data-copy="token-value">Copy</button></p>`)}
${extra}<p><a href="${ctx.base}/tokens/${token.id}">Open ${token.name}</a> · <a href="${ctx.base}/projects">Back to projects</a></p>`;
}

export function tokenRoutes(routes: ConsoleRoutes): void {
  const { router, services } = routes;

  /** The projects, their tokens and the new-token form (refilled with `input` after a refusal). */
  const projectsPage = async (res: Response, ctx: Signed, input?: TokenForm, error?: string): Promise<void> => {
    const [projects, tokens] = await Promise.all([services.accounts.listProjects(ctx.org.id), services.accounts.listTokens({ orgId: ctx.org.id })]);
    const sections = projects.map((p) => html`<section class="card"><h2>${p.name}</h2><p class="meta">project <code>${p.id}</code> · timezone ${p.timezone ?? 'UTC'} · created ${p.createdAt}</p>
<p class="project-links"><a href="${ctx.base}/audience?project=${p.id}">Audience</a> · <a href="${ctx.base}/segments?project=${p.id}">Segments</a> · <a href="${ctx.base}/opt-outs?project=${p.id}">Opt-outs</a> · <a href="${ctx.base}/scheduled">Scheduled messages</a></p>
${table(['Token', 'Kind', 'Scopes', 'State', 'Created'], tokens.filter((t) => t.projectId === p.id).map((t) => tokenRow(ctx, t)))}</section>`);
    const legacy = tokens.filter((t) => t.projectId === null);
    send(res, ctx, 'Projects & tokens', html`<p class="meta">Organization <code>${ctx.org.id}</code> · ${ctx.org.currency} · SMPP ${ctx.org.smppEnabled ? 'enabled' : 'disabled'}</p>
${sections}<section class="card"><h2>Account-wide (legacy) tokens</h2>${table(['Token', 'Kind', 'Scopes', 'State', 'Created'], legacy.map((t) => tokenRow(ctx, t)))}</section>
${createForm(ctx, projects, input, error)}`, error ? 400 : 200);
  };

  router.get('/projects', signed(routes, (_req, res, ctx) => projectsPage(res, ctx)));

  router.post('/tokens', signed(routes, async (req, res, ctx) => {
    const input: TokenForm = {
      name: field(req, 'name').slice(0, 100), kind: field(req, 'kind'), project: field(req, 'project'), datasource: field(req, 'datasource'),
      scopes: PRODUCT_SCOPES.filter((s) => field(req, `scope_${s}`) === '1'),
    };
    try {
      await createToken(req, res, ctx, input);
    } catch (err) {
      // A refused form comes back filled in, with the reason above it.
      if (err instanceof ConsoleError && err.code === 'CONSOLE_BAD_REQUEST') await projectsPage(res, ctx, input, err.message);
      else throw err;
    }
  }));

  const createToken = async (req: Request, res: Response, ctx: Signed, input: TokenForm): Promise<void> => {
    const kind = input.kind as TokenKind;
    if (!TOKEN_KINDS.includes(kind)) throw new ConsoleError('CONSOLE_BAD_REQUEST', `kind must be one of ${TOKEN_KINDS.join(', ')}`);
    const projectId = kind === 'legacy' ? null : input.project;
    if (projectId !== null) {
      const projects = await services.accounts.listProjects(ctx.org.id);
      if (!projects.some((p) => p.id === projectId)) throw new ConsoleError('CONSOLE_BAD_REQUEST', `a ${kind} token needs one of this organization's projects`);
    }
    let datasourceId: string | null = null;
    if (kind === 'datasource') {
      datasourceId = input.datasource;
      const datasources = await services.datasources.list({ orgId: ctx.org.id });
      if (!datasources.some((d) => d.id === datasourceId && d.projectId === projectId)) throw new ConsoleError('CONSOLE_BAD_REQUEST', 'a datasource token needs a datasource of the chosen project');
    }
    const scopes = kind === 'product' ? [...input.scopes] : [];
    if (kind === 'product' && scopes.length === 0) throw new ConsoleError('CONSOLE_BAD_REQUEST', 'a product token needs at least one scope');
    const name = input.name;
    const created = await services.accounts.createToken({ kind, orgId: ctx.org.id, projectId, datasourceId, scopes, ...(name ? { name } : {}) });
    req.log?.info({ token: created.token.id, kind }, 'console: token created');
    send(res, ctx, `Token ${created.token.name} created`, valueOnce(ctx, 'created', created.token, created.value), 201);
  };

  router.get('/tokens/:id', signed(routes, async (req, res, ctx) => {
    const token = await ownToken(routes, ctx, String(req.params['id']));
    const actions = token.revokedAt ? html`<p class="bad">Revoked ${token.revokedAt}: the API answers 401 to it.</p>`
      : html`<p>${postButton(ctx, `${ctx.base}/tokens/${token.id}/rotate`, 'Rotate (new value; this one stays valid until revoked)')}
${postButton(ctx, `${ctx.base}/tokens/${token.id}/revoke`, 'Revoke', {}, 'Revoke this token? Requests with it will be refused.')}</p>`;
    send(res, ctx, `Token ${token.name}`, html`<section class="card"><dl>
<dt>Id</dt><dd><code>${token.id}</code></dd><dt>Kind</dt><dd>${token.kind}</dd><dt>Project</dt><dd>${token.projectId ?? '(account-wide)'}</dd>
${token.datasourceId ? html`<dt>Datasource</dt><dd><a href="${ctx.base}/datasources/${token.datasourceId}">${token.datasourceId}</a></dd>` : ''}
<dt>Scopes</dt><dd>${token.scopes.join(', ') || '(none)'}</dd><dt>Created</dt><dd>${token.createdAt}</dd></dl>${actions}</section>
${token.kind === 'api_sms' && !token.revokedAt ? tokenSettings(ctx, token) : ''}`);
  }));

  router.post('/tokens/:id/rotate', signed(routes, async (req, res, ctx) => {
    const old = await ownToken(routes, ctx, String(req.params['id']));
    const rotated = await services.accounts.rotateToken(old.id);
    req.log?.info({ token: rotated.token.id, replaced: old.id }, 'console: token rotated');
    send(res, ctx, `Token ${rotated.token.name} rotated`, valueOnce(ctx, 'rotated', rotated.token, rotated.value,
      html`<p>The replaced token <a href="${ctx.base}/tokens/${old.id}">${old.id}</a> stays valid until you revoke it.</p>`), 201);
  }));

  router.post('/tokens/:id/revoke', signed(routes, async (req, res, ctx) => {
    const token = await ownToken(routes, ctx, String(req.params['id']));
    await services.accounts.revokeToken(token.id);
    req.log?.info({ token: token.id }, 'console: token revoked');
    res.redirect(303, `${ctx.base}/tokens/${token.id}`);
  }));
}
