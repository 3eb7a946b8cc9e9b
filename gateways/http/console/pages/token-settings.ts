// The settings of an api_sms token: its DLR webhook (URL, secret rotation with an overlap,
// the headers of earlier releases, "send test DLR"), SMPP credentials, two-way numbers, and a
// test SMS sent with the token through the acceptance core of POST /sms (priced first, then
// charged like any send once confirmed).
import type { Request } from 'express';
import type { Token } from '../../../../core/accounts';
import { AppError, ERRORS } from '../../../../core/errors';
import { fromMicros } from '../../../../core/money';
import { isWebhookTargetRefused, receiverSecret, type Submitter, type WebhookTargetPolicy } from '../../../../core/sms';
import { AccountConflictError } from '../../../../stores/account-store';
import { ConsoleError, field, ownToken, send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { csrfField, html, notice, postButton, type Html } from '../html';
import { checkWebhookTarget } from '../../../../infra/webhook-target';
import type { ConsoleServices } from '../services';
import { sendTestDlr } from '../webhook-test';

function webhookSection(ctx: Signed, token: Token): Html {
  const hook = token.webhook;
  const at = `${ctx.base}/tokens/${token.id}/webhook`;
  const state = hook
    ? html`<p>Signing: Standard Webhooks (<code>webhook-signature: v1,…</code>)${hook.legacyHeaders !== false ? ' and the X-Webhook-* headers of earlier releases' : ''}.
${hook.previous ? html` The previous secret also signs until ${hook.previous.until}.` : ''}</p>
<p>${postButton(ctx, `${at}/test`, 'Send test DLR')} ${postButton(ctx, `${at}/rotate`, 'Rotate secret (24 h overlap)', { overlapHours: '24' })} ${postButton(ctx, `${at}/clear`, 'Remove webhook', {}, 'Remove the webhook? DLRs will not be sent.')}</p>`
    : html`<p class="empty">No webhook: DLRs are not sent.</p>`;
  return html`<section class="card" id="webhook"><h2>DLR webhook</h2>
<form method="post" action="${at}">${csrfField(ctx)}<label>URL <input type="url" name="url" value="${hook?.url ?? ''}" required maxlength="2000" placeholder="https://example.com/dlr"></label>
<label class="check"><input type="checkbox" name="legacyHeaders" value="1"${hook && hook.legacyHeaders !== false ? html` checked` : ''}> also send the X-Webhook-* headers of earlier releases</label>
<button type="submit">Save webhook</button></form>${state}</section>`;
}

function smppSection(ctx: Signed, token: Token): Html {
  const at = `${ctx.base}/tokens/${token.id}/smpp`;
  const body = !ctx.org.smppEnabled ? html`<p class="empty">SMPP is not enabled on this organization.</p>`
    : token.smpp ? html`<p>system_id <code>${token.smpp.systemId}</code></p><p>${postButton(ctx, at, 'Reset password')} ${postButton(ctx, `${at}/revoke`, 'Revoke credentials', {}, 'Revoke the SMPP credentials?')}</p>`
      : html`<p>${postButton(ctx, at, 'Issue SMPP credentials')}</p>`;
  return html`<section class="card" id="smpp"><h2>SMPP credentials</h2>${body}</section>`;
}

function numbersSection(ctx: Signed, token: Token): Html {
  const at = `${ctx.base}/tokens/${token.id}/numbers`;
  return html`<section class="card" id="numbers"><h2>Two-way numbers</h2>
<ul>${token.numbers.map((n) => html`<li><code>${n}</code> ${postButton(ctx, `${at}/remove`, 'Remove', { number: n })}</li>`)}</ul>${token.numbers.length === 0 ? html`<p class="empty">(none)</p>` : ''}
<form method="post" action="${at}" class="inline">${csrfField(ctx)}<input name="number" required maxlength="20" pattern="\\+?[0-9A-Za-z]{3,16}" placeholder="+4915112345678"> <button type="submit">Add number</button></form></section>`;
}

/** What the test SMS form holds: the fields of a POST /sms body (spec 1 §4). */
interface TestSms {
  readonly to: string;
  readonly text: string;
  readonly from: string;
}

function testSmsFields(input: TestSms): Html {
  return html`<label>To <input name="to" required maxlength="20" value="${input.to}" placeholder="+4915112345678" inputmode="tel"></label>
<label>From <input name="from" required maxlength="16" value="${input.from}" placeholder="sender name or number"></label>
<label>Text <textarea name="text" required maxlength="1600" rows="3">${input.text}</textarea></label>`;
}

function testSmsSection(ctx: Signed, token: Token, input: TestSms = { to: '', text: 'Test message', from: 'Console' }, error?: string): Html {
  return html`<section class="card" id="test-sms"><h2>Send a test SMS</h2>${error ? notice('error', error) : ''}
<form method="post" action="${ctx.base}/tokens/${token.id}/test-sms">${csrfField(ctx)}${testSmsFields(input)}
<button type="submit">Price the test SMS</button> <span class="meta">Sent with this token like POST /sms and charged like any send, after you confirm the price.</span></form></section>`;
}

export function tokenSettings(ctx: Signed, token: Token): Html {
  return html`${webhookSection(ctx, token)}${smppSection(ctx, token)}${numbersSection(ctx, token)}${testSmsSection(ctx, token)}`;
}

/** The URL to store: public HTTPS unless private targets are allowed (spec 1 §6 rule 1), its host resolved and checked now. */
async function webhookUrl(text: string, services: ConsoleServices): Promise<string> {
  try {
    const { url } = await checkWebhookTarget(text, targetPolicy(services), services.webhookResolver);
    return url.toString();
  } catch (err) {
    if (isWebhookTargetRefused(err)) throw new ConsoleError('CONSOLE_BAD_REQUEST', `the webhook URL is refused: ${err.reason}`);
    throw err;
  }
}

const targetPolicy = (services: ConsoleServices): WebhookTargetPolicy => services.webhookTargets ?? { allowPrivateTargets: false };

export function tokenSettingsRoutes(routes: ConsoleRoutes): void {
  const { router, services, deps } = routes;
  const apiToken = async (ctx: Signed, id: string): Promise<Token> => {
    const token = await ownToken(routes, ctx, id);
    if (token.kind !== 'api_sms' || token.revokedAt) throw new ConsoleError('CONSOLE_CONFLICT', 'webhooks, SMPP credentials and numbers belong to active api_sms tokens');
    return token;
  };
  const back = (ctx: Signed, token: Token, anchor: string): string => `${ctx.base}/tokens/${token.id}#${anchor}`;
  const secretPage = (ctx: Signed, token: Token, what: string): Html => html`${notice('secret', html`<p>${what}. Configure your receiver's Standard Webhooks library with this secret (shown here once):</p>
<p><code id="webhook-secret" class="secret">${token.webhook ? receiverSecret(token.webhook) : ''}</code></p>`)}<p><a href="${back(ctx, token, 'webhook')}">Back to ${token.name}</a></p>`;

  router.post('/tokens/:id/webhook', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const updated = await services.accounts.setWebhook(token.id, await webhookUrl(field(req, 'url'), services), undefined, { legacyHeaders: field(req, 'legacyHeaders') === '1' });
    req.log?.info({ token: token.id }, 'console: webhook set');
    if (token.webhook) res.redirect(303, back(ctx, token, 'webhook'));
    else send(res, ctx, 'Webhook set', secretPage(ctx, updated, `DLRs of ${token.name} now go to ${updated.webhook?.url ?? ''}`));
  }));

  router.post('/tokens/:id/webhook/rotate', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const hours = Number(field(req, 'overlapHours') || '24');
    if (!Number.isFinite(hours) || hours < 0 || hours > 720) throw new ConsoleError('CONSOLE_BAD_REQUEST', 'the overlap is 0 to 720 hours');
    const updated = await services.accounts.rotateWebhookSecret(token.id, Math.round(hours * 3600));
    req.log?.info({ token: token.id }, 'console: webhook secret rotated');
    send(res, ctx, 'Webhook secret rotated', secretPage(ctx, updated, `New signing secret; the previous one signs too until ${updated.webhook?.previous?.until ?? 'now'}`));
  }));

  // A removal needs no page of its own: done, then back to the section it changed.
  const removal = (path: string, anchor: string, remove: (tokenId: string) => Promise<unknown>): void => {
    router.post(`/tokens/:id/${path}`, signed(routes, async (req, res, ctx) => {
      const token = await apiToken(ctx, String(req.params['id']));
      await remove(token.id);
      res.redirect(303, back(ctx, token, anchor));
    }));
  };

  removal('webhook/clear', 'webhook', (id) => services.accounts.clearWebhook(id));

  router.post('/tokens/:id/webhook/test', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    if (!token.webhook) throw new ConsoleError('CONSOLE_CONFLICT', 'set a webhook URL first');
    const answer = await sendTestDlr(token.webhook, services.webhookTimeoutMs, targetPolicy(services), services.webhookResolver);
    // A refused target was not contacted: no status, latency or body to show.
    const result = answer.refused !== null
      ? html`<p id="test-result">Not sent: <strong class="bad">${answer.refused}</strong>.</p>`
      : answer.status !== null
      ? html`<p id="test-result">The receiver answered <strong class="${answer.error ? 'bad' : 'good'}">${answer.status}</strong> in <strong>${answer.latencyMs} ms</strong>.</p>`
      : html`<p id="test-result">No answer: <strong class="bad">${answer.error ?? ''}</strong> (after ${answer.latencyMs} ms).</p>`;
    send(res, ctx, 'Test DLR sent', html`${notice(answer.error ? 'error' : 'ok', html`${result}<p class="meta">to ${token.webhook.url}, webhook-id <code>${answer.webhookId}</code></p>
${answer.body ? html`<pre>${answer.body}</pre>` : ''}`)}<p><a href="${back(ctx, token, 'webhook')}">Back to ${token.name}</a></p>`);
  }));

  router.post('/tokens/:id/smpp', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const issued = await services.accounts.issueSmppCredentials(token.id);
    req.log?.info({ token: token.id }, 'console: SMPP credentials issued');
    send(res, ctx, 'SMPP credentials', html`${notice('secret', html`<p>system_id <code>${issued.systemId}</code></p><p>password <code id="smpp-password" class="secret">${issued.password}</code> (shown once)</p>`)}
<p><a href="${back(ctx, token, 'smpp')}">Back to ${token.name}</a></p>`, 201);
  }));

  removal('smpp/revoke', 'smpp', (id) => services.accounts.revokeSmppCredentials(id));

  router.post('/tokens/:id/numbers', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const number = field(req, 'number');
    if (!/^\+?[0-9A-Za-z]{3,16}$/.test(number)) throw new ConsoleError('CONSOLE_BAD_REQUEST', 'a number is an MSISDN (digits, optional +) or an alphanumeric sender of 3 to 16 characters');
    // Which token holds a number is not this organization's business: one answer for any holder.
    await services.accounts.addNumber(token.id, number).catch((err: unknown) => {
      throw err instanceof AccountConflictError ? new ConsoleError('CONSOLE_CONFLICT', `the number ${number} is attached to another token`) : err;
    });
    res.redirect(303, back(ctx, token, 'numbers'));
  }));

  // A test SMS: first priced by the acceptance core's quote (nothing charged), then, confirmed, sent by it as POST /sms sends.
  const testSms = (req: Request): TestSms => ({ to: field(req, 'to'), text: field(req, 'text'), from: field(req, 'from') });
  const smsBody = (input: TestSms): Record<string, string> => ({ from: input.from, to: input.to, text: input.text });
  const submitter = (ctx: Signed, token: Token): Submitter => ({ orgId: ctx.org.id, projectId: token.projectId, tokenId: token.id, source: 'http', currency: ctx.org.currency });
  const refused = (err: unknown): string => {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    const fields = err.fields ? Object.entries(err.fields).map(([name, problems]) => `${name}: ${problems.join('; ')}`).join(' · ') : '';
    return fields ? `${err.message} (${fields})` : err.message;
  };

  router.post('/tokens/:id/test-sms', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const input = testSms(req);
    let quote;
    try {
      quote = await deps.services.acceptance.quote(submitter(ctx, token), smsBody(input));
    } catch (err) {
      send(res, ctx, `Token ${token.name}`, html`${testSmsSection(ctx, token, input, refused(err))}<p><a href="${back(ctx, token, 'test-sms')}">Back to ${token.name}</a></p>`, err instanceof AppError ? err.status : ERRORS.CONSOLE_BAD_REQUEST.status);
      return;
    }
    const item = quote.items[0]?.priced;
    send(res, ctx, 'Confirm the test SMS', html`<section class="card" id="test-sms-confirm"><p id="test-sms-quote">To <code>${item?.normalizedTo ?? input.to}</code> (${item?.country ?? ''}):
${item?.encoded.messagesCount ?? 0} part(s), <strong>${fromMicros(quote.totalMicros)} ${item?.price.currency ?? ctx.org.currency}</strong> charged to ${ctx.org.name}.</p>
<form method="post" action="${ctx.base}/tokens/${token.id}/test-sms/send">${csrfField(ctx)}${Object.entries(smsBody(input)).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}
<button type="submit">Send and charge</button> <a href="${back(ctx, token, 'test-sms')}">Cancel</a></form></section>`);
  }));

  router.post('/tokens/:id/test-sms/send', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const input = testSms(req);
    try {
      const message = await deps.services.acceptance.submitOne(submitter(ctx, token), smsBody(input));
      req.log?.info({ token: token.id, message: message.id }, 'console: test SMS sent');
      res.redirect(303, `${ctx.base}/messages/${message.id}`);
    } catch (err) {
      send(res, ctx, `Token ${token.name}`, html`${testSmsSection(ctx, token, input, refused(err))}<p><a href="${back(ctx, token, 'test-sms')}">Back to ${token.name}</a></p>`, err instanceof AppError ? err.status : ERRORS.CONSOLE_BAD_REQUEST.status);
    }
  }));

  router.post('/tokens/:id/numbers/remove', signed(routes, async (req, res, ctx) => {
    const token = await apiToken(ctx, String(req.params['id']));
    const number = field(req, 'number');
    if (!token.numbers.includes(number)) throw new ConsoleError('CONSOLE_NOT_FOUND', 'that number is not attached to this token');
    await services.accounts.removeNumber(token.id, number);
    res.redirect(303, back(ctx, token, 'numbers'));
  }));
}
