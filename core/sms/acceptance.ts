// The acceptance core shared by every transport (HTTP v1, legacy, SMPP): validates each item
// on its own, prices it, replays a repeated clientId, charges the accepted items' total
// atomically (all-or-nothing), and makes the accepted messages durable (state in KV, queued
// on JetStream) before answering. Spec 1 §2.1, §4 (bulk rules), §7, §8; DESIGN §4.
import { AppError, OutcomeUnknownError, unconfirmed, validationError, type FieldErrors } from '../errors';
import type { Price } from '../accounts/types';
import { MAX_BULK_ITEMS, type SmsCreateItem } from '../../schemas/sms';
import { idTime, newIds } from '../ids';
import { encodeText, type EncodedText } from './encoding';
import type { MessageSource, ReceiptRequest, SmsMessage } from './message';
import { checkPhoneNumber } from './phone';
import type { AcceptedQueue, ClientIds, Funds, MessageStates, OptOuts, PriceBook } from './ports';
import { checkScheduledAt, checkSmsItem } from './validate';

export const MAX_SEGMENTS = 10;
export { MAX_BULK_ITEMS };

export interface Submitter {
  readonly orgId: string;
  /** The project of an api_sms token; null for account-wide (legacy) tokens. */
  readonly projectId: string | null;
  readonly tokenId: string;
  readonly source: MessageSource;
  readonly currency: string;
}

export interface BulkError {
  readonly index: number;
  readonly clientId: string | null;
  readonly fields: FieldErrors;
}

export interface Accepted {
  /** Accepted messages in input order; a replayed clientId yields the original message. */
  readonly entities: SmsMessage[];
  readonly errors: BulkError[];
}

interface Prepared {
  readonly index: number;
  readonly message: SmsMessage;
}

/** An item's refusal; `shape` is set when a field had the wrong JSON type (400 for a single send). */
interface ItemError extends BulkError {
  readonly shape?: string;
}

type ItemResult = { readonly ok: true; readonly prepared: Prepared } | { readonly ok: false; readonly error: ItemError };

/** What sending an item would be: its fields checked, its text encoded, its destination priced and not opted out. */
export interface PricedItem {
  readonly input: SmsCreateItem;
  readonly country: string;
  readonly normalizedTo: string;
  readonly encoded: EncodedText;
  readonly price: Price;
  /** What sending it charges: the price per segment times the segments. */
  readonly priceUserMicros: number;
  /** When to send it (ISO 8601 UTC), from its scheduledAt; null: at once (DESIGN §4 Scheduling). */
  readonly scheduledAt: string | null;
}

/** An item's outcome of the step a send and a quote share (SmsAcceptance.checkItems). */
type ItemCheck = { readonly ok: true; readonly priced: PricedItem } | { readonly ok: false; readonly error: ItemError };

/** POST /sms/quote: what sending the items would do, with nothing charged, queued or claimed. */
export interface Quote {
  /** The items that would be sent, in input order, with their index. */
  readonly items: ReadonlyArray<{ readonly index: number; readonly priced: PricedItem }>;
  /** The items a send would refuse, as a bulk send reports them. */
  readonly errors: BulkError[];
  /** What a send would charge for the items (the sum of their priceUser), in micros. */
  readonly totalMicros: number;
}

export interface AcceptanceDeps {
  readonly prices: PriceBook;
  readonly funds: Funds;
  readonly states: MessageStates;
  readonly clientIds: ClientIds;
  readonly queue: AcceptedQueue;
  readonly optOuts: OptOuts;
  /** How long a message's state record lives after its last write (MESSAGE_STATE_TTL_HOURS): bounds scheduledAt. */
  readonly stateLifetimeMs?: number;
  readonly now?: () => Date;
}

/** A retry whose clientId is held by a request still in flight waits this long for its message. */
const REPLAY_WAIT_MS = 3000;
/** A request that has not charged, or not stored its messages, this long after it began gives up. */
const ACCEPT_DEADLINE_MS = 20_000;
/**
 * A claim this old whose message has no state was left by a request that died (kill -9)
 * between its claim and its state: a retry takes it over. Well past ACCEPT_DEADLINE_MS, so the
 * original has given up before a retry can take its clientId.
 */
export const CLAIM_TAKEOVER_MS = 60_000;

/**
 * A message the charge settler canceled with its refunded hold (pipelines/charge-settler.ts): the
 * only cancellation that leaves a message uncharged, and one that never reached the stream.
 */
export function refundedUnsent(message: SmsMessage): boolean {
  return message.status === 'canceled' && !message.charged;
}

/** The scope a clientId is unique in: the token's project, or the organization for account-wide tokens. */
export function clientIdScope(projectId: string | null, orgId: string): string {
  return projectId ? projectId : `org-${orgId}`;
}

const OPTED_OUT = 'the recipient has opted out (STOP) of messages from this project';

/** An item's refusal, naming it by index and by the clientId it carried (module-level: no closure per item). */
function rejectItem(item: unknown, index: number, fields: FieldErrors, shape?: string): { readonly ok: false; readonly error: ItemError } {
  const clientId = item && typeof item === 'object' && typeof (item as { clientId?: unknown }).clientId === 'string' ? (item as { clientId: string }).clientId : null;
  return { ok: false, error: { index, clientId, fields, ...(shape ? { shape } : {}) } };
}

/** POST /sms: the body is one object. */
function singleItem(body: unknown): object {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('BODY_NOT_OBJECT', 'the body must be a JSON object (an SMS create item)');
  return body;
}

/** POST /sms/bulk: the body is a top-level array of 1 to MAX_BULK_ITEMS items. */
function bulkItems(body: unknown): readonly unknown[] {
  if (!Array.isArray(body)) {
    throw new AppError('BODY_NOT_ARRAY', 'the body must be a top-level JSON array of SMS create items, not an object wrapping one (spec 1 §4 bulk rule 6)');
  }
  if (body.length > MAX_BULK_ITEMS) throw new AppError('PAYLOAD_TOO_LARGE', `a bulk holds at most ${MAX_BULK_ITEMS} items, got ${body.length}: split the batch`);
  if (body.length === 0) throw validationError({ body: [`must hold 1 to ${MAX_BULK_ITEMS} items`] });
  return body;
}

/** A single send's refusal of its item: 400 for a wrong JSON type, else 422 with the fields. */
function throwSingleError(error: ItemError | undefined): void {
  if (error?.shape) throw new AppError('WRONG_SHAPE', error.shape);
  if (error) throw validationError(error.fields);
}

const bulkError = ({ index, clientId, fields }: ItemError): BulkError => ({ index, clientId, fields });

/** A clientId used twice in one request: the later items are rejected, pointing at the first. */
function rejectRepeatedClientIds(results: ItemCheck[]): void {
  const first = new Map<string, number>();
  results.forEach((r, i) => {
    const clientId = r.ok ? r.priced.input.clientId : undefined;
    if (!clientId) return;
    const seen = first.get(clientId);
    if (seen === undefined) first.set(clientId, i);
    else results[i] = { ok: false, error: { index: i, clientId, fields: { clientId: [`repeats the clientId of item ${seen} of this request`] } } };
  });
}

/** The accepted message of a priced item. */
function toMessage(submitter: Submitter, priced: PricedItem, id: string, now: string, receipt?: ReceiptRequest): SmsMessage {
  const { input, encoded, price } = priced;
  return {
    id,
    orgId: submitter.orgId,
    // A legacy message belongs to no project (its token is organization-wide): '' here, on
    // the bus and in the history (migration 0012), seen by legacy tokens only.
    projectId: submitter.projectId ?? '',
    tokenId: submitter.tokenId,
    source: submitter.source,
    clientId: input.clientId ?? null,
    status: priced.scheduledAt ? 'scheduled' : 'queued',
    statusCode: null,
    from: input.from,
    country: priced.country,
    to: input.to,
    normalizedTo: priced.normalizedTo,
    charsCount: encoded.charsCount,
    text: input.text,
    deliveredText: encoded.deliveredText,
    messagesCount: encoded.messagesCount,
    encoding: encoded.encoding,
    unicode: encoded.unicode,
    allowUnicode: input.allowUnicode ?? false,
    charged: true,
    pricePerSmsMicros: price.priceMicros,
    priceUserMicros: priced.priceUserMicros,
    currency: price.currency,
    createdAt: now,
    chargedAt: now,
    scheduledAt: priced.scheduledAt,
    sentAt: null,
    deliveredAt: null,
    updatedAt: now,
    ...(receipt ? { receiptRequest: receipt } : {}),
    ...(input.validityPeriod === undefined ? {} : { validityPeriod: input.validityPeriod }),
  };
}

export class SmsAcceptance {
  constructor(private readonly deps: AcceptanceDeps) {}

  /** POST /sms: one item; every refusal is an error status (400, 402, 422). */
  async submitOne(submitter: Submitter, body: unknown): Promise<SmsMessage> {
    const result = await this.submit(submitter, [singleItem(body)]);
    throwSingleError(result.errors[0]);
    const entity = result.entities[0];
    if (!entity) throw new AppError('INTERNAL', 'no outcome for the item');
    return entity;
  }

  /**
   * POST /sms/bulk: each item validated on its own; 402 when the accepted items' total is not covered.
   * SMPP passes each item's receipt request beside the body (it is no field of the spec's item).
   */
  async submitBulk(submitter: Submitter, body: unknown, receipts?: ReadonlyArray<ReceiptRequest | undefined>): Promise<Accepted> {
    const result = await this.submit(submitter, bulkItems(body), receipts);
    return { entities: result.entities, errors: result.errors.map(bulkError) };
  }

  /**
   * POST /sms/quote: the body of POST /sms (an object) or of POST /sms/bulk (an array), checked
   * and priced by the same step as a send, with the same refusals (400, 413, 422; an object's
   * item refusal is the error status a single send answers). Nothing is charged, stored,
   * queued or claimed: a clientId a send would replay (no charge) is priced as new.
   */
  async quote(submitter: Submitter, body: unknown): Promise<Quote & { readonly single: boolean }> {
    const single = !Array.isArray(body);
    const checks = await this.checkItems(submitter, single ? [singleItem(body)] : bulkItems(body), (this.deps.now ? this.deps.now() : new Date()).getTime());
    const items: Array<{ index: number; priced: PricedItem }> = [];
    const errors: BulkError[] = [];
    let totalMicros = 0;
    checks.forEach((c, index) => {
      if (!c.ok) {
        if (single) throwSingleError(c.error);
        errors.push(bulkError(c.error));
        return;
      }
      items.push({ index, priced: c.priced });
      totalMicros += c.priced.priceUserMicros;
    });
    return { single, items, errors, totalMicros };
  }

  private async submit(submitter: Submitter, items: readonly unknown[], receipts?: ReadonlyArray<ReceiptRequest | undefined>): Promise<{ entities: SmsMessage[]; errors: ItemError[] }> {
    const started = Date.now();
    const nowDate = this.deps.now ? this.deps.now() : new Date();
    const now = nowDate.toISOString();
    const checks = await this.checkItems(submitter, items, nowDate.getTime());
    const ids = newIds(items.length);
    let withClientId = false;
    const results: ItemResult[] = new Array<ItemResult>(items.length);
    for (let index = 0; index < checks.length; index++) {
      const c = checks[index] as ItemCheck;
      if (!c.ok) {
        results[index] = c;
        continue;
      }
      if (c.priced.input.clientId) withClientId = true;
      results[index] = { ok: true, prepared: { index, message: toMessage(submitter, c.priced, ids[index] as string, now, receipts?.[index]) } };
    }

    const prepared: Prepared[] = [];
    for (const r of results) if (r.ok) prepared.push(r.prepared);
    const scope = clientIdScope(submitter.projectId, submitter.orgId);
    let fresh = prepared;
    const replays = new Map<number, SmsMessage>();
    if (withClientId) {
      const originals = await Promise.all(prepared.map((p) => (p.message.clientId ? this.claimOrReplay(scope, p.message) : null)));
      fresh = prepared.filter((_, i) => originals[i] === null);
      prepared.forEach((p, i) => { const original = originals[i]; if (original) replays.set(p.index, original); });
    }

    const releaseClaims = (): Promise<unknown> => Promise.all(fresh.filter((p) => p.message.clientId).map((p) => this.deps.clientIds.release(scope, p.message.clientId as string, p.message.id)));
    const tooLate = (): boolean => Date.now() - started > ACCEPT_DEADLINE_MS;
    const lateError = (): AppError => new AppError('INTERNAL', `accepting took longer than ${ACCEPT_DEADLINE_MS / 1000} s (the message bus is slow or unreachable); nothing was charged, retry with backoff`);
    if (tooLate()) {
      await releaseClaims();
      throw lateError();
    }
    const total = fresh.reduce((sum, p) => sum + p.message.priceUserMicros, 0);
    // The charge stays held until the messages are on the stream: if this process dies before
    // that, the charge settler refunds it (and cancels the states a clientId retry could find).
    const hold = total > 0 && fresh[0] ? { id: fresh[0].message.id, ids: fresh.filter((p) => p.message.clientId).map((p) => p.message.id) } : undefined;
    if (!(await this.deps.funds.charge(submitter.orgId, total, hold))) {
      await releaseClaims();
      throw new AppError('INSUFFICIENT_FUNDS', `the balance does not cover ${fresh.length === 1 ? 'this message' : `the ${fresh.length} accepted messages`}; add funds and retry`);
    }
    try {
      if (tooLate()) throw lateError();
      const messages = fresh.map((p) => p.message);
      await this.deps.states.putAll(messages);
      await this.deps.queue.enqueue(messages, hold ? { orgId: submitter.orgId, holdId: hold.id } : undefined);
    } catch (err) {
      // Perhaps stored: refunding here would send it free, freeing its clientIds could send it twice.
      if (hold && err instanceof OutcomeUnknownError) throw unconfirmed(err, 'the messages', 'retry with the same clientIds, so that none is sent twice');
      // Claims first: a retry that then sees the hold gone finds its clientId free (claimOrReplay).
      await releaseClaims();
      await this.deps.funds.credit(submitter.orgId, total, hold?.id);
      if (err instanceof AppError) throw err;
      throw new AppError('INTERNAL', 'the messages could not be queued; nothing was charged, retry with backoff', { cause: err });
    }
    if (hold) this.deps.funds.settle(submitter.orgId, hold.id);

    const entities: SmsMessage[] = [];
    const errors: ItemError[] = [];
    if (replays.size === 0) {
      // Every prepared item is fresh: entities in input order are the prepared messages.
      for (const r of results) {
        if (r.ok) entities.push(r.prepared.message);
        else errors.push(r.error);
      }
      return { entities, errors };
    }
    const byIndex = new Map(fresh.map((p) => [p.index, p.message]));
    results.forEach((r, index) => {
      if (!r.ok) errors.push(r.error);
      else {
        const message = byIndex.get(index) ?? replays.get(index);
        if (message) entities.push(message);
      }
    });
    return { entities, errors };
  }

  /**
   * Every item checked and priced, in input order, later repeats of a clientId refused: the step
   * a send and a quote share (the acceptance core's checks, with nothing written).
   */
  private async checkItems(submitter: Submitter, items: readonly unknown[], nowMs: number): Promise<ItemCheck[]> {
    const results: ItemCheck[] = new Array<ItemCheck>(items.length);
    // Items whose opt-out answer is not at hand wait for it; the others are checked in one pass.
    const waiting: Array<Promise<void>> = [];
    for (let index = 0; index < items.length; index++) {
      const result = this.check(submitter, items[index], index, nowMs);
      if (result instanceof Promise) waiting.push(result.then((r) => { results[index] = r; }));
      else results[index] = result;
    }
    if (waiting.length > 0) await Promise.all(waiting);
    let withClientId = false;
    for (const r of results) if (r.ok && r.priced.input.clientId) withClientId = true;
    if (withClientId) rejectRepeatedClientIds(results);
    return results;
  }

  /** An item's outcome; a promise only when its opt-out answer is not at hand. */
  private check(submitter: Submitter, item: unknown, index: number, nowMs: number): ItemCheck | Promise<ItemCheck> {
    const checked = checkSmsItem(item);
    if (!checked.ok) {
      if ('shape' in checked) {
        return rejectItem(item, index, checked.shape.fields, checked.shape.field ? `field "${checked.shape.field}" ${checked.shape.message}` : `the item ${checked.shape.message}`);
      }
      return rejectItem(item, index, checked.fields);
    }
    const input = checked.value;
    const fields: FieldErrors = {};
    const phone = checkPhoneNumber(input.to);
    if (!phone.ok) fields['to'] = [phone.message];
    const encoded = encodeText(input.text, input.allowUnicode ?? false);
    if (encoded.messagesCount > MAX_SEGMENTS) fields['text'] = [`is too long: ${encoded.messagesCount} segments (${encoded.encoding}), at most ${MAX_SEGMENTS}`];
    // The legacy API keeps its fields (spec 1 §1): no scheduled sends there.
    if (input.scheduledAt !== undefined && submitter.source === 'legacy') return rejectItem(item, index, { scheduledAt: ['is not a known field'] });
    const schedule = input.scheduledAt === undefined ? undefined : checkScheduledAt(input.scheduledAt, nowMs, this.deps.stateLifetimeMs);
    if (schedule && !schedule.ok) fields['scheduledAt'] = [schedule.message];
    if (!phone.ok || Object.keys(fields).length > 0) return rejectItem(item, index, fields);
    const scheduledAt = schedule?.ok && schedule.atMs !== null ? new Date(schedule.atMs).toISOString() : null;

    const price = this.deps.prices.price(submitter.orgId, 'sms', phone.country);
    if (!price) return rejectItem(item, index, { to: [`no price for destination country ${phone.country}; this country cannot be reached from this account`] });
    const optedOut = submitter.projectId ? this.deps.optOuts.isOptedOut(submitter.projectId, phone.normalized) : false;
    if (optedOut === true) return rejectItem(item, index, { to: [OPTED_OUT] });
    const ok: ItemCheck = { ok: true, priced: { input, country: phone.country, normalizedTo: phone.normalized, encoded, price, priceUserMicros: price.priceMicros * encoded.messagesCount, scheduledAt } };
    return optedOut === false ? ok : optedOut.then((out) => (out ? rejectItem(item, index, { to: [OPTED_OUT] }) : ok));
  }

  /**
   * Claims the message's clientId: null when it is this message's now (claimed, or taken over
   * from a request that died before storing its message), else the message that holds it.
   */
  private async claimOrReplay(scope: string, message: SmsMessage): Promise<SmsMessage | null> {
    const clientId = message.clientId as string;
    for (let attempt = 0; attempt < 3; attempt++) {
      const heldBy = await this.deps.clientIds.claim(scope, clientId, message.id);
      if (heldBy === null) return null;
      const original = await this.original(heldBy, clientId);
      if (original && (original.status === 'queued' || original.status === 'scheduled')) {
        // Queued with no hold: settled (the stream has it), or credited back by its own request
        // after the bus refused it; that request released its claims first, so the claim asked
        // again tells which (free: it is this message's now).
        const holder = await this.deps.clientIds.claim(scope, clientId, message.id);
        if (holder === null) return null;
        if (holder === heldBy) return original;
        continue;
      }
      if (original) return original;
      if (await this.deps.clientIds.takeOver(scope, clientId, heldBy, message.id)) return null;
    }
    throw new AppError('INTERNAL', `clientId "${clientId}" changed hands while this request was being accepted; retry shortly`);
  }

  /**
   * The message that holds a clientId; waits briefly if its request is still in flight. Null
   * when the claim is older than CLAIM_TAKEOVER_MS and its message was never stored.
   */
  private async original(id: string, clientId: string): Promise<SmsMessage | null> {
    const deadline = Date.now() + REPLAY_WAIT_MS;
    for (;;) {
      let message = await this.deps.states.get(id);
      // A queued message whose charge is still held may or may not be on the stream (its publish
      // unconfirmed, or its request died): only the charge settler tells, by settling the hold
      // from the stream or by canceling the message and refunding it. Until then it is neither
      // replayed nor taken over, however old. Its hold gone means settled or refunded; the
      // settler cancels the messages before it refunds, so the state read again tells which.
      let held = false;
      if (message && (message.status === 'queued' || message.status === 'scheduled')) {
        held = await this.deps.funds.isHeld(message.orgId, id);
        message = held ? null : await this.deps.states.get(id);
      }
      // Canceled and refunded by the charge settler: its request died before the stream had it.
      // The settler frees the claim next; until then it is this retry's to take over (a replay
      // would answer 201 for a message that is never sent).
      if (message && refundedUnsent(message)) return null;
      if (message) return message;
      const age = Date.now() - idTime(id);
      if (age >= CLAIM_TAKEOVER_MS && !held) return null;
      if (Date.now() > deadline) {
        const wait = Math.ceil((CLAIM_TAKEOVER_MS - age) / 1000);
        throw new AppError('INTERNAL', held
          ? `clientId "${clientId}" is held by a request still being accepted; retry shortly (its charge is still held until the stream is known to have its message; if it never got there, the charge is refunded and the clientId released within about a minute)`
          : `clientId "${clientId}" is held by a request still being accepted; retry shortly (if that request died, its claim is released to a retry in ${wait} s)`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
