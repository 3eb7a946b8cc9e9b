// The console's home page: charts of the last 24 hours (hourly) or 30 days (daily) from the
// statistics GET /sms/stats and GET /lookup/stats answer (the same StatsReader, the same compiled
// Grammar A query: no SQL of its own), the opt-out lists, the ingestion usage GET /stream shows
// per datasource, and the ingest writer's lag from this process's metrics. Every chart is drawn
// by dashboard.js from the table under it (the accessible form of the same numbers), and links
// into the message log filtered to what it counts.
import type { Request } from 'express';
import { AppError, ERRORS } from '../../../../core/errors';
import { parseUrl, SMS_FIELDS } from '../../../../core/filters/grammar-a';
import { compileStats, SMS_FINAL_STATUSES } from '../../../../core/filters/grammar-a/stats';
import type { LookupStatsRow, SmsStatsRow, Visibility } from '../../../../core/sms';
import { consumerLag, consumerOldestAge, ingestVisibility } from '../../../../infra/metrics';
import { CONSUMERS, STREAMS } from '../../../../core/bus';
import { send, signed, type ConsoleRoutes, type Signed } from '../handler';
import { html, notice, scrollBox, time, type Html } from '../html';

export type Range = '24h' | '30d';
const HOUR = 3600_000;
const DAY = 24 * HOUR;
/** Opt-out entries read per project (the list is a key scan of KV: docs/decisions.md, opt-outs). */
export const OPT_OUTS_READ = 10_000;
/** Datasources whose usage is read (one query each). */
export const USAGE_DATASOURCES = 20;
/** Countries shown in the delivery-rate chart (those with the most messages). */
const TOP_COUNTRIES = 15;

const STATUS_COLORS: Readonly<Record<string, string>> = {
  delivered: '#1a7f37', failed: '#b42318', expired: '#b54708', rejected: '#7a2e0e', error: '#c11574', canceled: '#475467', unknown: '#667085', pending: '#1f5fbf',
};

/** The buckets of a range: start of each hour (24 h) or UTC day (30 d), oldest first, and the bucket length. */
export function buckets(range: Range, now: number): { starts: number[]; step: number; group: 'hourly' | 'daily' } {
  const step = range === '24h' ? HOUR : DAY;
  const last = Math.floor(now / step) * step;
  const count = range === '24h' ? 24 : 30;
  return { starts: Array.from({ length: count }, (_, i) => last - (count - 1 - i) * step), step, group: range === '24h' ? 'hourly' : 'daily' };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** A message-log link of a Grammar A URL filter (URLSearchParams writes `+` as %2B). */
export function logLink(base: string, filter: Record<string, string>): string {
  return `${base}/messages?${new URLSearchParams({ filter: new URLSearchParams(filter).toString() }).toString()}`;
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits;
const pct = (rate: number | null): string => (rate === null ? '' : String(round(rate * 100, 1)));

interface Series {
  readonly name: string;
  readonly color: string;
  /** 'n': drawn on an axis of its own (a count beside a rate). */
  readonly scale?: 'n';
}

interface ChartRow {
  readonly x: number | string;
  readonly label: Html;
  /** The row's log link (its header cell's `a[data-bucket]`, which a click on the chart opens). */
  readonly href?: string;
  readonly values: ReadonlyArray<number | null>;
  /** A link per value (its cell links into the log), by series index. */
  readonly links?: ReadonlyArray<string | undefined>;
}

interface Chart {
  readonly id: string;
  readonly title: string;
  readonly kind: 'time' | 'category';
  readonly unit: string;
  readonly xLabel: string;
  readonly series: readonly Series[];
  readonly rows: readonly ChartRow[];
  readonly link: { readonly href: string; readonly label: string };
  readonly note?: Html;
}

function chart(c: Chart): Html {
  const head = html`<tr><th scope="col">${c.xLabel}</th>${c.series.map((s) => html`<th scope="col" data-series="${s.name}" data-color="${s.color}"${s.scale ? html` data-scale="${s.scale}"` : ''}>${s.name}</th>`)}</tr>`;
  const body = c.rows.map((r) => html`<tr data-x="${r.x}"><th scope="row">${r.href ? html`<a href="${r.href}" data-bucket>${r.label}</a>` : r.label}</th>${r.values.map((v, i) => {
    const link = r.links?.[i];
    const text = v === null ? '–' : String(v);
    return html`<td class="num" data-v="${v === null ? '' : v}">${link && v ? html`<a href="${link}">${text}</a>` : text}</td>`;
  })}</tr>`);
  return html`<section class="card chart-card" aria-labelledby="${c.id}-title"><h2 id="${c.id}-title">${c.title}</h2>
${c.rows.length === 0 ? html`<p class="empty">No data.</p>` : html`<div class="chart" data-chart-for="${c.id}" aria-hidden="true"></div>`}${c.note ?? ''}
<details class="numbers"><summary>Numbers (${c.unit})</summary>${scrollBox(`${c.title}: numbers`, html`<table id="${c.id}" class="chart-data" data-kind="${c.kind}" data-unit="${c.unit}"><caption class="sr-only">${c.title} (${c.unit})</caption><thead>${head}</thead><tbody>${body}</tbody></table>`)}</details>
<p class="chart-link"><a href="${c.link.href}">${c.link.label}</a></p></section>`;
}

/** Stats of one query (the same call GET /sms/stats makes); a 400 (a ceiling) becomes the chart's notice. */
async function stats<T>(run: () => Promise<T[]>): Promise<T[] | string> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.status === ERRORS.CONSOLE_BAD_REQUEST.status) return err.message;
    throw err;
  }
}

interface WriterLag {
  readonly measured: boolean;
  readonly count: number;
  readonly meanSeconds: number | null;
  /** Upper bound of the histogram bucket holding the median / the 95th percentile. */
  readonly p50AtMostSeconds: number | null;
  readonly p95AtMostSeconds: number | null;
  readonly pendingMessages: number | null;
  readonly oldestSeconds: number | null;
}

/** The ingest writer's lag from this process's metrics (docs/metrics.md): set where the ingest writer runs. */
export async function writerLag(): Promise<WriterLag> {
  const hist = (await ingestVisibility.get()).values;
  const count = hist.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  const sum = hist.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;
  const bucketsOf = hist.filter((v) => v.metricName?.endsWith('_bucket') && v.labels['le'] !== '+Inf').map((v) => ({ le: Number(v.labels['le']), n: v.value }));
  const atMost = (q: number): number | null => (count === 0 ? null : bucketsOf.find((b) => b.n >= q * count)?.le ?? null);
  const writer = (v: { labels: Record<string, string | number> }): boolean => v.labels['stream'] === STREAMS.ingest.name && v.labels['consumer'] === CONSUMERS.ingestWriter;
  const pending = (await consumerLag.get()).values.find(writer);
  const oldest = (await consumerOldestAge.get()).values.find(writer);
  return {
    measured: count > 0 || pending !== undefined,
    count,
    meanSeconds: count > 0 ? round(sum / count, 3) : null,
    p50AtMostSeconds: atMost(0.5),
    p95AtMostSeconds: atMost(0.95),
    pendingMessages: pending?.value ?? null,
    oldestSeconds: oldest ? round(oldest.value, 1) : null,
  };
}

export function rangeOf(req: Request): Range {
  return req.query['range'] === '30d' ? '30d' : '24h';
}

export function dashboardRoutes(routes: ConsoleRoutes): void {
  const { router, deps } = routes;

  router.get('/dashboard', signed(routes, async (req, res, ctx) => {
    const range = rangeOf(req);
    const now = Date.now();
    const { starts, step, group } = buckets(range, now);
    const from = iso(starts[0] ?? now);
    const v: Visibility = { orgId: ctx.org.id, projectId: null };
    const currency = ctx.org.currency;
    // When messages carry a direction, the delivery charts count outbound ones and inbound has its own series.
    const directed = SMS_FIELDS.some((f) => f.name === 'direction');
    const outbound: Record<string, string> = directed ? { direction_eq: 'outbound' } : {};
    const query = (extra: Record<string, string>): URLSearchParams => new URLSearchParams({ ...outbound, createdAt_gte: from, ...extra });
    const sms = (params: URLSearchParams): Promise<SmsStatsRow[] | string> => stats(() => deps.services.stats.sms(v, compileStats(parseUrl(params), 'sms'), currency));
    const [byPeriod, byCountry, lookups, inbound] = await Promise.all([
      sms(query({ _group: group })),
      sms(query({ _group: 'country' })),
      stats<LookupStatsRow>(() => deps.services.stats.lookups(v, compileStats(parseUrl(new URLSearchParams({ createdAt_gte: from, _group: group })), 'lookup'), currency)),
      directed ? sms(new URLSearchParams({ direction_eq: 'inbound', createdAt_gte: from, _group: group })) : Promise.resolve(null),
    ]);
    const [optOuts, usage, lag] = await Promise.all([optOutCounts(routes, ctx, starts, step), ingestUsage(routes, ctx), writerLag()]);

    const problems = [byPeriod, byCountry, lookups, inbound].filter((r): r is string => typeof r === 'string');
    const periodRows = new Map((Array.isArray(byPeriod) ? byPeriod : []).map((r) => [r.period ?? '', r]));
    const lookupRows = new Map((Array.isArray(lookups) ? lookups : []).map((r) => [r.period ?? '', r]));
    const inboundRows = new Map((Array.isArray(inbound) ? inbound : []).map((r) => [r.period ?? '', r]));
    const statusNames = [...SMS_FINAL_STATUSES, 'pending'] as const;
    const periodFilter = (start: number): Record<string, string> => ({ ...outbound, createdAt_gte: iso(start), createdAt_lt: iso(start + step) });
    const cells = <T>(fn: (start: number, row: SmsStatsRow | undefined) => T): T[] => starts.map((s) => fn(s, periodRows.get(iso(s))));
    const label = (s: number): Html => time(iso(s), range === '30d');
    const total = (Array.isArray(byPeriod) ? byPeriod : []).reduce((a, r) => ({
      messages: a.messages + r.messages, delivered: a.delivered + r.delivered, final: a.final + r.messages - r.pending, cost: a.cost + r.cost,
    }), { messages: 0, delivered: 0, final: 0, cost: 0 });
    const lookupCost = (Array.isArray(lookups) ? lookups : []).reduce((a, r) => a + r.cost, 0);
    const rangeLink = logLink(ctx.base, { ...outbound, createdAt_gte: from });

    const charts: Chart[] = [
      {
        id: 'chart-status', title: 'Messages by status', kind: 'time', unit: 'messages', xLabel: range === '24h' ? 'Hour' : 'Day (UTC)',
        series: statusNames.map((s) => ({ name: s, color: STATUS_COLORS[s] ?? '#000' })),
        rows: cells((s, r) => ({
          x: s / 1000, label: label(s), href: logLink(ctx.base, periodFilter(s)),
          values: statusNames.map((name) => (r ? r[name] : 0)),
          links: statusNames.map((name) => (name === 'pending' ? undefined : logLink(ctx.base, { ...periodFilter(s), status_eq: name }))),
        })),
        link: { href: rangeLink, label: 'Open these messages in the log' },
      },
      {
        id: 'chart-rate', title: 'Delivery rate', kind: 'time', unit: '% of final messages', xLabel: range === '24h' ? 'Hour' : 'Day (UTC)',
        series: [{ name: 'delivery rate %', color: STATUS_COLORS['delivered'] as string }],
        rows: cells((s, r) => ({ x: s / 1000, label: label(s), href: logLink(ctx.base, periodFilter(s)), values: [r?.deliveryRate == null ? null : round(r.deliveryRate * 100, 1)] })),
        link: { href: logLink(ctx.base, { ...outbound, createdAt_gte: from, status_eq: 'delivered' }), label: 'Open the delivered messages in the log' },
      },
      {
        id: 'chart-spend', title: 'Spend', kind: 'time', unit: currency, xLabel: range === '24h' ? 'Hour' : 'Day (UTC)',
        series: [{ name: 'SMS', color: '#1f5fbf' }, { name: 'lookups', color: '#b54708' }],
        rows: cells((s, r) => ({ x: s / 1000, label: label(s), href: logLink(ctx.base, { ...periodFilter(s), charged_eq: 'true' }), values: [round(r?.cost ?? 0, 4), round(lookupRows.get(iso(s))?.cost ?? 0, 4)] })),
        link: { href: logLink(ctx.base, { ...outbound, createdAt_gte: from, charged_eq: 'true' }), label: 'Open the charged messages in the log' },
      },
      {
        id: 'chart-inbound', title: directed ? 'Inbound and opt-outs' : 'Opt-outs', kind: 'time', unit: 'numbers', xLabel: range === '24h' ? 'Hour' : 'Day (UTC)',
        series: [...(directed ? [{ name: 'inbound', color: '#1f5fbf' }] : []), { name: 'opt-outs', color: '#b42318' }],
        rows: starts.map((s, i) => ({
          x: s / 1000, label: label(s),
          ...(directed ? { href: logLink(ctx.base, { direction_eq: 'inbound', createdAt_gte: iso(s), createdAt_lt: iso(s + step) }) } : {}),
          values: [...(directed ? [inboundRows.get(iso(s))?.messages ?? 0] : []), optOuts.counts[i] ?? 0],
        })),
        link: directed ? { href: logLink(ctx.base, { direction_eq: 'inbound', createdAt_gte: from }), label: 'Open the inbound messages in the log' } : { href: `${ctx.base}/messages`, label: 'Open the message log' },
        note: html`<p class="hint">${directed ? '' : 'The statistics do not count inbound messages (messages have no direction field yet). '}Opt-outs by the time a number was added to a project's list (STOP or the API), read from each project's list (its first ${OPT_OUTS_READ.toLocaleString('en')} numbers)${optOuts.truncated ? html` — <strong>a list is longer: its later numbers are not counted</strong>` : ''}.</p>`,
      },
    ];
    const countries = (Array.isArray(byCountry) ? byCountry : []).slice().sort((a, b) => b.messages - a.messages).slice(0, TOP_COUNTRIES);
    charts.push({
      id: 'chart-country', title: 'Delivery rate by country', kind: 'category', unit: '% of final messages', xLabel: 'Country',
      series: [{ name: 'delivery rate %', color: STATUS_COLORS['delivered'] as string }, { name: 'messages', color: '#98a2b3', scale: 'n' }],
      rows: countries.map((r) => ({ x: r.country ?? '', label: html`${r.country ?? '(none)'}`, href: logLink(ctx.base, { ...outbound, createdAt_gte: from, country_eq: r.country ?? '' }), values: [r.deliveryRate === null ? null : round(r.deliveryRate * 100, 1), r.messages] })),
      link: { href: rangeLink, label: 'Open these messages in the log' },
      note: html`<p class="hint">The ${TOP_COUNTRIES} countries with the most messages; the bar is the delivery rate, the count is in the numbers.</p>`,
    });
    charts.push({
      id: 'chart-ingest', title: 'Ingestion volume', kind: 'category', unit: 'items', xLabel: 'Datasource',
      series: [{ name: 'accepted (24 h)', color: '#1a7f37' }, { name: 'failed (24 h)', color: '#b42318' }],
      rows: usage.rows.map((u) => ({ x: u.name, label: html`<a href="${ctx.base}/datasources/${u.id}">${u.name}</a>`, values: [u.dayAccepted, u.dayFailed] })),
      link: { href: `${ctx.base}/datasources`, label: 'Open the datasources' },
      note: html`<p class="hint">Items of contacts, events and deletions the ingest writer applied, per datasource, over the last 24 hours (the usage of <code>GET /stream</code>; it keeps no longer series)${usage.more ? `; the first ${USAGE_DATASOURCES} datasources` : ''}.</p>`,
    });

    const summary = html`<section class="summary" aria-label="Totals of the range">
<div class="stat"><span class="label">Messages</span><span class="big" id="total-messages">${total.messages}</span></div>
<div class="stat"><span class="label">Delivered</span><span class="big" id="total-delivered">${total.delivered}</span></div>
<div class="stat"><span class="label">Delivery rate</span><span class="big" id="total-rate">${total.final > 0 ? `${pct(total.delivered / total.final)} %` : '–'}</span></div>
<div class="stat"><span class="label">Spend</span><span class="big" id="total-spend">${round(total.cost + lookupCost, 4)} ${currency}</span></div>
<div class="stat"><span class="label">Opt-outs</span><span class="big" id="total-optouts">${optOuts.counts.reduce((a, b) => a + b, 0)}</span></div></section>`;
    const lagCard = html`<section class="card" aria-labelledby="lag-title"><h2 id="lag-title">Ingest writer's lag</h2>
${lag.measured ? html`<dl id="writer-lag">
<dt>Reception → queryable (median)</dt><dd>${lag.p50AtMostSeconds === null ? '–' : `≤ ${lag.p50AtMostSeconds} s`}</dd>
<dt>Reception → queryable (95th percentile)</dt><dd>${lag.p95AtMostSeconds === null ? '–' : `≤ ${lag.p95AtMostSeconds} s`}</dd>
<dt>Mean</dt><dd>${lag.meanSeconds === null ? '–' : `${lag.meanSeconds} s`} over ${lag.count} stream messages</dd>
<dt>Waiting in the stream</dt><dd>${lag.pendingMessages === null ? '–' : `${lag.pendingMessages} messages`}${lag.oldestSeconds ? `, the oldest ${lag.oldestSeconds} s old` : ''}</dd></dl>
<p class="hint">Of the whole deployment since this process started (<code>ingest_visibility_seconds</code>, <code>jetstream_consumer_lag_messages</code>: docs/metrics.md).</p>`
    : html`<p class="empty" id="writer-lag">Not measured in this process: the ingest writer runs in another one (see its <code>/metrics</code>).</p>`}</section>`;
    const toggle = html`<nav class="range" aria-label="Range">${(['24h', '30d'] as const).map((r) => html`<a href="${ctx.base}/dashboard?range=${r}"${r === range ? html` aria-current="page"` : ''}>${r === '24h' ? 'Last 24 hours' : 'Last 30 days'}</a>`)}</nav>`;
    send(res, ctx, 'Home', html`${toggle}<p class="meta">From ${time(from)} to now, ${range === '24h' ? 'by hour' : 'by day (UTC days: the statistics group in UTC)'}.</p>
${problems.map((p) => notice('error', p))}${summary}<div class="charts">${charts.map(chart)}</div>${lagCard}`, 200, { scripts: ['uplot.js', 'dashboard.js'], styles: ['uplot.css'] });
  }));
}

/** New opt-outs per bucket over the organization's projects (by `since`); `truncated` when a list was longer than read. */
async function optOutCounts(routes: ConsoleRoutes, ctx: Signed, starts: readonly number[], step: number): Promise<{ counts: number[]; truncated: boolean }> {
  const counts = starts.map(() => 0);
  const list = routes.deps.services.optOuts;
  if (!list || starts.length === 0) return { counts, truncated: false };
  const first = starts[0] as number;
  const projects = await routes.services.accounts.listProjects(ctx.org.id);
  let truncated = false;
  for (const project of projects) {
    const entries = await list.list(project.id, { start: 0, limit: OPT_OUTS_READ });
    if (entries.length === OPT_OUTS_READ) truncated = true;
    for (const e of entries) {
      const i = Math.floor((Date.parse(e.since) - first) / step);
      if (i >= 0 && i < counts.length) counts[i] = (counts[i] ?? 0) + 1;
    }
  }
  return { counts, truncated };
}

interface UsageRow {
  readonly id: string;
  readonly name: string;
  readonly dayAccepted: number;
  readonly dayFailed: number;
}

/** The usage GET /stream reports, per datasource of the organization (the first USAGE_DATASOURCES). */
async function ingestUsage(routes: ConsoleRoutes, ctx: Signed): Promise<{ rows: UsageRow[]; more: boolean }> {
  const usage = routes.deps.ingest?.usage;
  if (!usage) return { rows: [], more: false };
  const all = await routes.services.datasources.list({ orgId: ctx.org.id });
  const rows = await Promise.all(all.slice(0, USAGE_DATASOURCES).map(async (ds) => {
    const { lastDay } = await usage.recent(ds.id);
    const sum = (w: typeof lastDay, k: 'accepted' | 'failed'): number => w.contacts[k] + w.events[k] + w.delete[k];
    return { id: ds.id, name: ds.name, dayAccepted: sum(lastDay, 'accepted'), dayFailed: sum(lastDay, 'failed') };
  }));
  return { rows, more: all.length > USAGE_DATASOURCES };
}
