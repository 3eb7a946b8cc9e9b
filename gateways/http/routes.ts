// What the app's routing table says about a path, read from Express's own router stack at
// request time, so that routers mounted by any module (SMS, legacy, ingestion, audience) are
// covered without registering anywhere: the methods a path takes (for 405 + Allow) and the
// route pattern that serves a request (the /metrics route label).
import type { Express } from 'express';

interface MatchResult {
  readonly path: string;
}

/** The parts of router@2's Layer and Route this module reads. */
interface LayerLike {
  match(path: string): MatchResult | false;
  readonly route?: { readonly path: unknown; readonly methods: Record<string, boolean | undefined> };
  readonly handle?: { readonly stack?: readonly LayerLike[] };
  /** The pattern the layer was mounted with, e.g. `/project/:project/datasource/:datasource`. */
  readonly rawPath?: unknown;
}

export interface RouteMatch {
  /** The full pattern, e.g. `/transactional/v1/sms/:id`. */
  readonly pattern: string;
  /** Upper-case methods; `*` when the route takes every method (`router.all`). */
  readonly methods: readonly string[];
}

function safeMatch(layer: LayerLike, path: string): MatchResult | false {
  try {
    return layer.match(path);
  } catch {
    // A parameter with broken percent-encoding: the URL guard answers 400 before routing.
    return false;
  }
}

function collect(stack: readonly LayerLike[], path: string, base: string, out: RouteMatch[]): void {
  for (const layer of stack) {
    const match = safeMatch(layer, path);
    if (!match) continue;
    if (layer.route) {
      const methods = Object.entries(layer.route.methods).filter(([, on]) => on).map(([m]) => (m === '_all' ? '*' : m.toUpperCase()));
      if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
      out.push({ pattern: `${base}${typeof layer.route.path === 'string' ? layer.route.path : String(layer.route.path)}`, methods });
      continue;
    }
    const inner = layer.handle?.stack;
    if (!inner) continue;
    // A mounted router sees the path without its mount point, as Express strips it.
    const rest = path.slice(match.path.length);
    // The label names the mount's pattern, not the ids in this path (bounded metric labels).
    const mounted = typeof layer.rawPath === 'string' ? layer.rawPath : match.path;
    const mount = mounted.endsWith('/') ? mounted.slice(0, -1) : mounted;
    collect(inner, rest.startsWith('/') ? rest : `/${rest}`, `${base}${mount}`, out);
  }
}

function stackOf(app: Express): readonly LayerLike[] {
  return (app as unknown as { router: { stack: readonly LayerLike[] } }).router.stack;
}

const paramsIn = (pattern: string): number => pattern.split('/').filter((segment) => segment.startsWith(':') || segment.startsWith('*')).length;

/** What the table says about one path, computed once per path (gateways/http/guards.ts, /metrics). */
export interface PathAnswer {
  /** The most specific routes matching the path. */
  readonly routes: readonly RouteMatch[];
  /** The methods they take together, sorted, OPTIONS included; empty for no route. */
  readonly allowed: readonly string[];
  /** `allowed` as an Allow header value. */
  readonly allowHeader: string;
  /** Every method is taken (`router.all`). */
  readonly anyMethod: boolean;
  /** Upper-case methods some route declares itself (OPTIONS only when a route does). */
  readonly explicit: ReadonlySet<string>;
  /** Per upper-case method, the pattern of the first route that serves it (filled as asked). */
  readonly patterns: Map<string, string | undefined>;
}

function answerFor(out: RouteMatch[]): PathAnswer {
  const fewest = Math.min(...out.map((r) => paramsIn(r.pattern)));
  const routes = out.filter((r) => paramsIn(r.pattern) === fewest);
  const allowed = allowedBy(routes);
  const explicit = new Set(routes.flatMap((r) => r.methods));
  return { routes, allowed, allowHeader: allowed.join(', '), anyMethod: explicit.has('*'), explicit, patterns: new Map() };
}

/**
 * The routes whose pattern matches `path` (a raw, undecoded path without query), the most
 * specific only: `/sms/bulk` is the bulk resource, not a message id for `/sms/:id`, so its
 * methods are those of `/sms/bulk` (GET /sms/bulk is a 405, as OPTIONS and the document say).
 */
export function pathAnswer(app: Express, path: string): PathAnswer {
  let known = answers.get(app);
  if (!known) {
    known = new Map();
    answers.set(app, known);
  }
  const hit = known.get(path);
  if (hit) return hit;
  const out: RouteMatch[] = [];
  collect(stackOf(app), path, '', out);
  const answer = answerFor(out);
  if (known.size >= KNOWN_PATHS) known.clear();
  known.set(path, answer);
  return answer;
}

export function routesFor(app: Express, path: string): readonly RouteMatch[] {
  return pathAnswer(app, path).routes;
}

/**
 * Recent answers per path. The table is fixed once the app serves (every router is mounted at
 * start), and walking it costs more than the rest of a small request: the guard and the
 * /metrics label ask for every request, and most requests repeat a path.
 */
const STANDARD_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const answers = new WeakMap<Express, Map<string, PathAnswer>>();
const KNOWN_PATHS = 10_000;

/** The methods `routes` take together, sorted (the Allow header); empty for no route. */
export function allowedBy(routes: readonly RouteMatch[]): string[] {
  const methods = new Set(routes.flatMap((r) => r.methods));
  if (methods.size > 0) methods.add('OPTIONS');
  return [...methods].sort();
}

/** The pattern of the first route that serves `method` on `path`, or undefined. */
export function routePattern(app: Express, method: string, path: string): string | undefined {
  const answer = pathAnswer(app, path);
  if (answer.patterns.has(method)) return answer.patterns.get(method);
  const wanted = method.toUpperCase();
  const pattern = answer.routes.find((r) => r.methods.includes('*') || r.methods.includes(wanted))?.pattern;
  // Methods are few (clients can send any token, so only the standard ones are remembered).
  if (STANDARD_METHODS.has(method)) answer.patterns.set(method, pattern);
  return pattern;
}
