// Projects and their tokens: list, create (the value shown once, never stored), rotate (a
// replacement, its value shown once) and revoke, with each token's kind and scopes.
import { PRODUCT_SCOPES, TOKEN_KINDS, type Token, type TokenKind } from '../../../../core/accounts/types';
import { ConsoleError, field, ownToken, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { csrfField, html, notice, postButton, table, type Html } from '../html';
import { tokenSettings } from './token-settings';

export function tokenRow(ctx: Signed, t: Token): Html {
  return html`<tr><td><a href="${ctx.base}/tokens/${t.id}">${t.name}</a></td><td>${t.kind}</td><td>${t.scopes.join(', ')}</td>
<td>${t.revokedAt ? html`<span class="bad">revoked</span>` : html`<span class="good">active</span>`}</td><td>${t.createdAt}</td></tr>`;
}

function createForm(ctx: Signed, projects: ReadonlyArray<{ id: string; name: string }>): Html {
  return html`<form method="post" action="${ctx.base}/tokens" class="card" id="create-token">${csrfField(ctx)}
<h2>New token</h2>
<label>Name <input name="name" maxlength="100" placeholder="e.g. checkout service"></label>
<label>Kind <select name="kind">${TOKEN_KINDS.map((k) => html`<option value="${k}">${k}</option>`)}</select></label>
<label>Project <select name="project"><option value="">(none: legacy tokens are account-wide)</option>${projects.map((p) => html`<option value="${p.id}">${p.name}</option>`)}</select></label>
<label>Datasource id <input name="datasource" placeholder="datasource tokens only"></label>
<fieldset><legend>Scopes (product tokens)</legend>${PRODUCT_SCOPES.map((s) => html`<label class="check"><input type="checkbox" name="scope_${s}" value="1"> ${s}</label>`)}</fieldset>
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

  router.get('/projects', signed(routes, async (_req, res, ctx) => {
    const [projects, tokens] = await Promise.all([services.accounts.listProjects(ctx.org.id), services.accounts.listTokens({ orgId: ctx.org.id })]);
    const sections = projects.map((p) => html`<section class="card"><h2>${p.name}</h2><p class="meta">project <code>${p.id}</code> · timezone ${p.timezone ?? 'UTC'} · created ${p.createdAt}</p>
${table(['Token', 'Kind', 'Scopes', 'State', 'Created'], tokens.filter((t) => t.projectId === p.id).map((t) => tokenRow(ctx, t)))}</section>`);
    const legacy = tokens.filter((t) => t.projectId === null);
    send(res, ctx, 'Projects & tokens', html`<p class="meta">Organization <code>${ctx.org.id}</code> · ${ctx.org.currency} · SMPP ${ctx.org.smppEnabled ? 'enabled' : 'disabled'}</p>
${sections}<section class="card"><h2>Account-wide (legacy) tokens</h2>${table(['Token', 'Kind', 'Scopes', 'State', 'Created'], legacy.map((t) => tokenRow(ctx, t)))}</section>
${createForm(ctx, projects)}`);
  }));

  router.post('/tokens', signed(routes, async (req, res, ctx) => {
    const kind = field(req, 'kind') as TokenKind;
    if (!TOKEN_KINDS.includes(kind)) throw new ConsoleError(400, 'Refused', `kind must be one of ${TOKEN_KINDS.join(', ')}`);
    const projectId = kind === 'legacy' ? null : field(req, 'project');
    if (projectId !== null) {
      const projects = await services.accounts.listProjects(ctx.org.id);
      if (!projects.some((p) => p.id === projectId)) throw new ConsoleError(400, 'Refused', `a ${kind} token needs one of this organization's projects`);
    }
    let datasourceId: string | null = null;
    if (kind === 'datasource') {
      datasourceId = field(req, 'datasource');
      const datasources = await services.datasources.list({ orgId: ctx.org.id });
      if (!datasources.some((d) => d.id === datasourceId && d.projectId === projectId)) throw new ConsoleError(400, 'Refused', 'a datasource token needs a datasource of the chosen project');
    }
    const scopes = kind === 'product' ? PRODUCT_SCOPES.filter((s) => field(req, `scope_${s}`) === '1') : [];
    if (kind === 'product' && scopes.length === 0) throw new ConsoleError(400, 'Refused', 'a product token needs at least one scope');
    const name = field(req, 'name').slice(0, 100);
    const created = await services.accounts.createToken({ kind, orgId: ctx.org.id, projectId, datasourceId, scopes, ...(name ? { name } : {}) });
    req.log?.info({ token: created.token.id, kind }, 'console: token created');
    send(res, ctx, `Token ${created.token.name} created`, valueOnce(ctx, 'created', created.token, created.value), 201);
  }));

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
