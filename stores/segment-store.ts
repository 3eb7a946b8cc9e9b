// Segments (spec 3 §2.4 rule 3): stored audience filters per project, in the `accounts` KV
// bucket under `segment.<project>.<slug>`. Written by the segment endpoints and the admin CLI;
// read while compiling a filter that refers to them (core/filters/grammar-b/segments.ts).
import type { KV } from '@nats-io/kv';
import type { SegmentSource } from '../core/filters/grammar-b';
import type { Segment } from '../core/filters/grammar-b/ports';
import { SEGMENT_SLUG_PATTERN } from '../schemas/audience';

const SLUG = new RegExp(SEGMENT_SLUG_PATTERN);

export type { Segment } from '../core/filters/grammar-b/ports';

export const segmentKey = (project: string, slug: string): string => `segment.${project}.${slug}`;

export class SegmentStore implements SegmentSource {
  constructor(private readonly kv: KV) {}

  async get(project: string, slug: string): Promise<Segment | null> {
    // A slug that could never be stored (and is no valid KV key) is simply missing.
    if (!SLUG.test(slug)) return null;
    const entry = await this.kv.get(segmentKey(project, slug));
    return entry && entry.operation === 'PUT' && entry.length > 0 ? entry.json<Segment>() : null;
  }

  async getRoot(project: string, slug: string): Promise<unknown> {
    return (await this.get(project, slug))?.root ?? null;
  }

  /** Creates or replaces; `created` tells which. */
  async put(project: string, input: { slug: string; name: string; root: unknown }): Promise<{ segment: Segment; created: boolean }> {
    const existing = await this.get(project, input.slug);
    const now = new Date().toISOString();
    const segment: Segment = { project, slug: input.slug, name: input.name, root: input.root, createdAt: existing?.createdAt ?? now, updatedAt: now };
    await this.kv.put(segmentKey(project, input.slug), JSON.stringify(segment));
    return { segment, created: existing === null };
  }

  async list(project: string): Promise<Segment[]> {
    const keys: string[] = [];
    for await (const key of await this.kv.keys(`segment.${project}.*`)) keys.push(key);
    const found = await Promise.all(keys.map(async (k) => {
      const entry = await this.kv.get(k);
      return entry && entry.operation === 'PUT' && entry.length > 0 ? entry.json<Segment>() : null;
    }));
    return found.filter((s): s is Segment => s !== null).sort((a, b) => a.slug.localeCompare(b.slug));
  }

  async remove(project: string, slug: string): Promise<boolean> {
    if ((await this.get(project, slug)) === null) return false;
    await this.kv.delete(segmentKey(project, slug));
    return true;
  }
}
