// Loading the segments a filter refers to, transitively, before compiling (the compiler is
// synchronous). Stored segments are filter trees validated when they were saved; the
// compiler applies the depth cap and cycle detection (spec 3 §2.4 rule 3).
import { ParamBinder } from '../params';
import type { Node } from './ast';
import { ALL_SEGMENT, checkCompiledSize, compileFilter, segmentRefs, type SegmentMap } from './compile';
import { SEGMENT_MAX_DEPTH } from './limits';
import { sqlContext } from './params';
import { parseNode } from './parse-node';
import { parseSegment } from './parse-search';

/** A port: the stored filter tree (raw JSON) of a project's segment, or null. */
export interface SegmentSource {
  getRoot(project: string, slug: string): Promise<unknown>;
}

/** Loads every segment reachable within the depth cap (+1, so that the compiler sees the overflow). */
export async function loadSegments(root: Node | null, project: string, source: SegmentSource): Promise<SegmentMap> {
  const found = new Map<string, Node>();
  let frontier = segmentRefs(root);
  for (let depth = 1; depth <= SEGMENT_MAX_DEPTH + 1 && frontier.length > 0; depth += 1) {
    const next: string[] = [];
    for (const slug of new Set(frontier)) {
      if (slug === ALL_SEGMENT || found.has(slug)) continue;
      const raw = await source.getRoot(project, slug);
      if (raw === null || raw === undefined) continue;
      const node = parseNode(raw, `segment ${slug}`);
      found.set(slug, node);
      next.push(...segmentRefs(node));
    }
    frontier = next;
  }
  return found;
}

/** Where a checked segment is stored: the source segments are read from, and its write. */
export interface SegmentWriter<Saved> extends SegmentSource {
  put(project: string, input: { slug: string; name: string; root: unknown }): Promise<Saved>;
}

/**
 * Checks a segment create body (spec 3 §2.4) as every surface saves one (API, console, CLI): its
 * shape, then depth, cycles and compiled size with the new segment in place (they are checked
 * again at search time, when the segments it names may have changed), and only then stores it.
 */
export async function saveSegment<Saved>(store: SegmentWriter<Saved>, project: string, body: unknown, now: Date): Promise<Saved> {
  const input = parseSegment(body);
  const overlay: SegmentSource = { getRoot: (p, slug) => (slug === input.slug ? Promise.resolve(input.rawRoot) : store.getRoot(p, slug)) };
  const root = { kind: 'segment', path: 'root', key: input.slug, negate: false } as const;
  const c = sqlContext(new ParamBinder(), { audience: 'audience', events: 'events' }, project, 'UTC', now);
  checkCompiledSize(compileFilter(root, c, await loadSegments(root, project, overlay)), c.binder.params);
  return store.put(project, { slug: input.slug, name: input.name, root: input.rawRoot });
}
