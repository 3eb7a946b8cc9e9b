// In-memory ports of the lifecycle activities (activities/lifecycle-deps.ts) for unit tests in
// MockActivityEnvironment: message states by compare-and-set, what is published, posted,
// dead-lettered, claimed and credited, and which batch holds each message.
import type { LifecycleDeps } from '../../activities/lifecycle-deps';
import type { Token } from '../../core/accounts/types';
import type { DeadDlr } from '../../core/sms/dlr';
import type { LifecycleOwner, VersionedMessage, WebhookRequest } from '../../core/sms/lifecycle-ports';

export class LifecycleWorld {
  readonly states = new Map<string, VersionedMessage>();
  /** Compare-and-set conflicts to report before a write lands (each moves the stored revision on). */
  conflicts = 0;
  /** State reads made. */
  reads = 0;
  readonly published: Array<{ subject: string; payload: unknown; msgId: string | undefined }> = [];
  readonly posts: WebhookRequest[] = [];
  /** The status every webhook answers, but for the URLs in `down` (503). */
  answer = 200;
  readonly down = new Set<string>();
  readonly dead: DeadDlr[] = [];
  readonly claimed = new Set<string>();
  readonly credits: Array<[string, number]> = [];
  /** Refund keys the balance holds (credited, marker not yet written): core/sms/refund.ts. */
  readonly pendingRefunds = new Set<string>();
  /** Set by a test: the next N balance writes of a refund apply and then fail (a write whose answer was lost). */
  lostRefundAnswers = 0;
  readonly owners = new Map<string, LifecycleOwner>();
  /** `<project> <number>` pairs opted out (a scheduled message's release checks them). */
  readonly optedOut = new Set<string>();

  constructor(private readonly tokens: Readonly<Record<string, Token>>) {}

  deps(): LifecycleDeps {
    return {
      states: {
        read: async (id) => { this.reads += 1; return this.states.get(id) ?? null; },
        replace: async (m, revision) => {
          const stored = this.states.get(m.id);
          if (this.conflicts > 0) {
            this.conflicts -= 1;
            if (stored) this.states.set(m.id, { ...stored, revision: stored.revision + 1 });
            return null;
          }
          if (stored?.revision !== revision) return null;
          this.states.set(m.id, { message: m, revision: revision + 1 });
          return revision + 1;
        },
      },
      bus: { publish: async (subject, payload, msgId) => { this.published.push({ subject, payload, msgId }); } },
      webhooks: { post: async (request) => { this.posts.push(request); return this.down.has(request.url) ? 503 : this.answer; } },
      deadLetters: { put: async (dead) => { this.dead.push(dead); } },
      once: { claim: async (key) => { if (this.claimed.has(key)) return false; this.claimed.add(key); return true; }, has: async (key) => this.claimed.has(key) },
      tokens: { token: (id) => this.tokens[id] },
      owners: {
        claim: async (id, owner) => { if (!this.owners.has(id)) this.owners.set(id, owner); return this.owners.get(id) ?? owner; },
        find: async (id) => this.owners.get(id) ?? null,
      },
      funds: {
        refundOnce: async (org, key, micros) => {
          if (this.pendingRefunds.has(key)) return false;
          this.pendingRefunds.add(key);
          this.credits.push([org, micros]);
          if (this.lostRefundAnswers > 0) {
            this.lostRefundAnswers -= 1;
            throw new Error('no publish acknowledgement within 5000 ms');
          }
          return true;
        },
        forgetRefund: async (_org, key) => { this.pendingRefunds.delete(key); },
      },
      optOuts: { isOptedOut: (projectId, number) => this.optedOut.has(`${projectId} ${number}`) },
      webhookTimeoutMs: 1000,
      log: { info: () => undefined, warn: () => undefined },
    };
  }
}
