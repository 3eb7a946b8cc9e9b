// Loading the segments a filter refers to, transitively, before compiling (the compiler is
// synchronous). Stored segments are filter trees validated when they were saved; the
// compiler applies the depth cap and cycle detection (spec 3 §2.4 rule 3).
import type { Node } from './ast';
import { ALL_SEGMENT, segmentRefs, type SegmentMap } from './compile';
import { SEGMENT_MAX_DEPTH } from './limits';
import { parseNode } from './parse-node';

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
