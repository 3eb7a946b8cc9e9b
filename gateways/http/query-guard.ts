// Unknown query parameters on a POST are a 400 naming them, before anything is done (DESIGN §4):
// a client that believes in a parameter the endpoint does not take (`?dryRun=true`) must not
// have its request carried out as if it had not sent it. What each POST takes is read from the
// OpenAPI document the app serves (its query parameters and its query-string security scheme,
// `access_token`), so the guard and the document cannot disagree.
import type { Express, RequestHandler } from 'express';
import { AppError } from '../../core/errors';
import { routePattern } from './routes';

interface DocParameter {
  readonly name?: unknown;
  readonly in?: unknown;
}
interface DocOperation {
  readonly parameters?: readonly DocParameter[];
  readonly requestBody?: unknown;
  /** The operation's own security requirements (the admin API: its bearer only), else the document's. */
  readonly security?: ReadonlyArray<Record<string, unknown>>;
  readonly servers?: ReadonlyArray<{ readonly url: string }>;
}
interface DocLike {
  readonly servers?: ReadonlyArray<{ readonly url: string }>;
  readonly components?: { readonly securitySchemes?: Record<string, { readonly type?: unknown; readonly in?: unknown; readonly name?: unknown }> };
  readonly paths: Record<string, Record<string, unknown>>;
}

/** The query names a POST takes, by Express route pattern (`/ingest/v1/project/:project/...`). */
export interface PostQueryNames {
  readonly byRoute: ReadonlyMap<string, ReadonlySet<string>>;
  /** The document's query-string credentials: what a POST the document does not list takes. */
  readonly everywhere: ReadonlySet<string>;
  /** The route patterns of the POSTs that declare no requestBody (an empty body is theirs: gateways/http/guards.ts). */
  readonly bodiless: ReadonlySet<string>;
}

const queryNames = (parameters: readonly DocParameter[] | undefined): string[] =>
  (parameters ?? []).filter((p) => p.in === 'query' && typeof p.name === 'string').map((p) => p.name as string);

/**
 * Per POST operation of `document`: its server's base joined with its path, `{name}` written
 * `:name` as Express routes are; the names are the operation's and its path item's query
 * parameters and every query-string API key of the document (access_token, spec 1 §5).
 * `mirrors` maps a base to another mount of the same routes (the legacy API at the root
 * mirrors the SMS API v1: `{ '/transactional/v1': '' }`).
 */
export function postQueryNames(served: object, mirrors: Readonly<Record<string, string>> = {}): PostQueryNames {
  const document = served as DocLike;
  const schemes = document.components?.securitySchemes ?? {};
  const inQuery = (names: readonly string[]): string[] => names.map((n) => schemes[n]).filter((s) => s !== undefined && s.type === 'apiKey' && s.in === 'query' && typeof s.name === 'string').map((s) => s?.name as string);
  const everywhere = inQuery(Object.keys(schemes));
  const table = new Map<string, ReadonlySet<string>>();
  const bodiless = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    const operation = item['post'] as DocOperation | undefined;
    if (!operation) continue;
    const pathServers = (item as { servers?: ReadonlyArray<{ url: string }> }).servers;
    const base = (operation.servers ?? pathServers ?? document.servers)?.[0]?.url ?? '';
    const credentials = operation.security ? inQuery(operation.security.flatMap((requirement) => Object.keys(requirement))) : everywhere;
    const names = new Set([...credentials, ...queryNames((item as { parameters?: DocParameter[] }).parameters), ...queryNames(operation.parameters)]);
    const patterns = [`${base}${path}`];
    const mirror = mirrors[base];
    if (mirror !== undefined) patterns.push(`${mirror}${path}`);
    for (const pattern of patterns.map((p) => p.replace(/\{([^}]+)\}/g, ':$1'))) {
      table.set(pattern, names);
      if (operation.requestBody === undefined) bodiless.add(pattern);
    }
  }
  return { byRoute: table, everywhere: new Set(everywhere), bodiless };
}

/** Names in the error detail: the first few, each shortened (they come from the client). */
const LISTED = 5;
const shown = (name: string): string => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}…` : name);

/**
 * A POST whose query carries a name its route does not take is a 400 UNKNOWN_QUERY_PARAMETER
 * naming them (in the error body of the API of the path). A POST route the table does not
 * list takes the document's query-string credentials only. The table is built on first use. Other methods pass: their query
 * parameters are their filters, checked where they are parsed.
 */
export function knownQueryParameters(app: Express, table: () => PostQueryNames): RequestHandler {
  let taken: PostQueryNames | undefined;
  return (req, _res, next) => {
    const url = req.originalUrl;
    const mark = url.indexOf('?');
    if (req.method !== 'POST' || mark < 0 || mark === url.length - 1) {
      next();
      return;
    }
    const pattern = routePattern(app, 'POST', req.path);
    // No POST route here: the route guard answers the 404 or 405.
    if (pattern === undefined) {
      next();
      return;
    }
    taken ??= table();
    const allowed = taken.byRoute.get(pattern) ?? taken.everywhere;
    const unknown = [...new Set(new URLSearchParams(url.slice(mark + 1)).keys())].filter((name) => !allowed.has(name));
    if (unknown.length === 0) {
      next();
      return;
    }
    const names = unknown.slice(0, LISTED).map(shown).join(', ') + (unknown.length > LISTED ? ` and ${unknown.length - LISTED} more` : '');
    const takes = allowed.size > 0 ? [...allowed].sort().join(', ') : 'no query parameters';
    next(new AppError('UNKNOWN_QUERY_PARAMETER', `unknown query parameter${unknown.length > 1 ? 's' : ''} ${names}: POST ${pattern} takes ${takes}; nothing was done`));
  };
}
