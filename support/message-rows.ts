// Realistic sms_messages rows for tests and benchmarks, deterministic from a seed:
//  - makeMessage: one full SmsMessage with sensible defaults, any field overridden;
//  - idAt: a UUIDv7 whose timestamp is a given instant (ids are time-ordered, core/ids.ts);
//  - generateMessageBatches: a stream of insert batches over a time span, in creation order,
//    with a few organizations (one big one holding most rows), several projects each, a
//    realistic mix of statuses, countries, senders, texts (GSM-7 and unicode), clientIds and
//    prices; a fraction of messages carries its whole life as ~4 state rows (queued, sent,
//    accepted/buffered, final), whose later rows arrive in the next batch, as the writer
//    flushes them; the others are a single row (their history already merged).
import type { MessageStatus, SmsMessage } from '../core/sms';

/** mulberry32: a small, fast, seeded PRNG in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HEX = '0123456789abcdef';

/** A UUIDv7 for the instant `ms` (random bits from `random`, default Math.random). */
export function idAt(ms: number, random: () => number = Math.random): string {
  const time = Math.floor(ms).toString(16).padStart(12, '0');
  let rest = '';
  for (let i = 0; i < 19; i++) rest += HEX[Math.floor(random() * 16)];
  const variant = HEX[8 + Math.floor(random() * 4)];
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${rest.slice(0, 3)}-${variant}${rest.slice(3, 6)}-${rest.slice(6, 18)}`;
}

/** ISO 8601 with milliseconds and Z, the product's time format. */
export const iso = (ms: number): string => new Date(ms).toISOString();

/** A complete message; `createdAt` defaults to the id's instant, `updatedAt` to `createdAt`. */
export function makeMessage(overrides: Partial<SmsMessage> = {}): SmsMessage {
  const created = overrides.createdAt ?? iso(Date.UTC(2026, 10, 22, 12, 0, 0));
  const text = overrides.text ?? 'Your code is 123456';
  return {
    id: idAt(Date.parse(created)),
    orgId: 'org-a',
    projectId: 'p1',
    tokenId: 't1',
    source: 'http',
    clientId: null,
    status: 'queued',
    statusCode: null,
    from: 'Acme',
    country: 'DE',
    to: '+4915112345678',
    normalizedTo: '+4915112345678',
    charsCount: [...text].length,
    text,
    deliveredText: text,
    messagesCount: 1,
    encoding: 'GSM-7',
    unicode: false,
    allowUnicode: false,
    charged: true,
    pricePerSmsMicros: 75_000,
    priceUserMicros: 75_000,
    currency: 'EUR',
    createdAt: created,
    chargedAt: created,
    scheduledAt: null,
    sentAt: null,
    deliveredAt: null,
    updatedAt: overrides.createdAt ?? created,
    ...overrides,
  };
}

type Weighted<T> = readonly (readonly [T, number])[];

function picker<T>(table: Weighted<T>): (random: () => number) => T {
  const total = table.reduce((sum, [, w]) => sum + w, 0);
  const cumulative = table.map(([v], i) => [v, table.slice(0, i + 1).reduce((s, [, w]) => s + w, 0) / total] as const);
  return (random) => {
    const r = random();
    for (const [v, c] of cumulative) if (r < c) return v;
    return cumulative[cumulative.length - 1]![0];
  };
}

/** Organizations and their share of traffic: one big org holds most rows. */
export const GENERATED_ORGS: Weighted<string> = [
  ['org-big', 82], ['org-mid', 10], ['org-small', 5], ['org-tiny', 2], ['org-trial', 1],
];

/** The newest status of a message, as seen by a history query. */
export const GENERATED_STATUSES: Weighted<MessageStatus> = [
  ['delivered', 78], ['failed', 6], ['buffered', 3], ['accepted', 2.5], ['sent', 2], ['expired', 2], ['rejected', 2],
  ['unknown', 1.5], ['queued', 1], ['canceled', 1], ['error', 1],
];

interface Country { readonly code: string; readonly prefix: string; readonly digits: number; readonly priceMicros: number }

const COUNTRIES: Weighted<Country> = [
  [{ code: 'DE', prefix: '+49151', digits: 8, priceMicros: 75_000 }, 30],
  [{ code: 'FR', prefix: '+336', digits: 8, priceMicros: 68_000 }, 15],
  [{ code: 'GB', prefix: '+447', digits: 9, priceMicros: 41_000 }, 14],
  [{ code: 'ES', prefix: '+346', digits: 8, priceMicros: 72_000 }, 8],
  [{ code: 'IT', prefix: '+393', digits: 9, priceMicros: 81_000 }, 8],
  [{ code: 'NL', prefix: '+316', digits: 8, priceMicros: 93_000 }, 5],
  [{ code: 'PL', prefix: '+485', digits: 8, priceMicros: 35_000 }, 5],
  [{ code: 'US', prefix: '+1202', digits: 7, priceMicros: 9_000 }, 5],
  [{ code: 'AT', prefix: '+43664', digits: 7, priceMicros: 88_000 }, 3],
  [{ code: 'CH', prefix: '+4179', digits: 7, priceMicros: 65_000 }, 2],
  [{ code: 'SE', prefix: '+467', digits: 8, priceMicros: 51_000 }, 2],
  [{ code: 'GR', prefix: '+3069', digits: 8, priceMicros: 49_000 }, 1.5],
  [{ code: 'UA', prefix: '+38067', digits: 7, priceMicros: 57_000 }, 1],
  [{ code: 'JP', prefix: '+8190', digits: 8, priceMicros: 77_000 }, 0.5],
];

export const GENERATED_COUNTRIES: readonly string[] = COUNTRIES.map(([c]) => c.code);

const TEMPLATES: Weighted<(r: () => number) => string> = [
  [(r) => `Your verification code is ${digits(r, 6)}`, 40],
  [(r) => `Ihr Code lautet ${digits(r, 6)}. Gültig für 10 Minuten.`, 10],
  [(r) => `Your order #${digits(r, 7)} has shipped and will arrive ${['today', 'tomorrow', 'on Monday'][Math.floor(r() * 3)]}.`, 15],
  [(r) => `Reminder: your appointment on ${1 + Math.floor(r() * 28)}.${1 + Math.floor(r() * 12)}. at ${8 + Math.floor(r() * 10)}:00. Reply STOP to opt out.`, 10],
  [(r) => `Votre colis ${digits(r, 10)} est en cours de livraison.`, 8],
  [(r) => `Ваш код подтверждения: ${digits(r, 5)}`, 3],
  [(r) => `Κωδικός επαλήθευσης: ${digits(r, 6)}`, 2],
  [(r) => `🎉 Flash sale! ${10 + Math.floor(r() * 60)}% off everything until midnight 🛍️`, 5],
  [(r) => `認証コード ${digits(r, 6)}`, 1],
  [(r) => `Hi, your balance is low (EUR ${(r() * 20).toFixed(2)}). Top up at https://example.com/top-up?ref=${digits(r, 8)} to keep sending messages without interruption. Thank you for choosing us.`, 6],
];

function digits(random: () => number, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += String(Math.floor(random() * 10));
  return s;
}

const GSM_BASIC = /^[A-Za-z0-9 @£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ!"#¤%&'()*+,\-./:;<=>?¡ÄÖÑÜ§¿äöñüà\n\r^{}\\[~\]|€]*$/;

/** Encoding, segment count and delivered text as the product computes them, approximately. */
function encodingOf(text: string): Pick<SmsMessage, 'encoding' | 'unicode' | 'allowUnicode' | 'charsCount' | 'messagesCount' | 'deliveredText'> {
  const chars = [...text].length;
  if (GSM_BASIC.test(text)) {
    return { encoding: 'GSM-7', unicode: false, allowUnicode: false, charsCount: chars, messagesCount: chars <= 160 ? 1 : Math.ceil(chars / 153), deliveredText: text };
  }
  const units = text.length;
  return { encoding: 'UCS-2', unicode: true, allowUnicode: true, charsCount: chars, messagesCount: units <= 70 ? 1 : Math.ceil(units / 67), deliveredText: text };
}

const FINAL_CODE: Readonly<Partial<Record<MessageStatus, number>>> = {
  delivered: 0, failed: 5, expired: 3, rejected: 100, unknown: 1, canceled: 4, error: 99,
};

export interface GeneratorOptions {
  /** Number of messages (not rows). */
  readonly messages: number;
  /** Messages per batch; later state rows of a batch arrive in the next one. */
  readonly batchSize?: number;
  readonly seed?: number;
  /** Creation times are spread evenly (with a daily rhythm) over [from, to). */
  readonly from: number;
  readonly to: number;
  /** Fraction of messages that carry all their state rows (about 4) instead of one. */
  readonly historyFraction?: number;
}

export interface GeneratedBatch {
  readonly rows: SmsMessage[];
  /** Messages whose first row is in this batch. */
  readonly messages: number;
}

const pickOrg = picker(GENERATED_ORGS);
const pickStatus = picker(GENERATED_STATUSES);
const pickCountry = picker(COUNTRIES);
const pickTemplate = picker(TEMPLATES);
const pickProject = picker<number>([[1, 60], [2, 25], [3, 10], [4, 5]]);

/** Insert batches of realistic rows, in creation order. */
export function* generateMessageBatches(options: GeneratorOptions): Generator<GeneratedBatch> {
  const random = seededRandom(options.seed ?? 42);
  const batchSize = options.batchSize ?? 100_000;
  const fraction = options.historyFraction ?? 0.25;
  const span = options.to - options.from;
  let carried: SmsMessage[] = [];
  for (let start = 0; start < options.messages; start += batchSize) {
    const end = Math.min(options.messages, start + batchSize);
    const rows: SmsMessage[] = carried;
    carried = [];
    for (let i = start; i < end; i++) {
      const createdMs = Math.floor(options.from + ((i + random()) / options.messages) * span);
      const life = lifeOf(random, createdMs);
      const last = life[life.length - 1]!;
      if (random() < fraction && life.length > 1) {
        rows.push(life[0]!);
        carried.push(...life.slice(1));
      } else {
        rows.push(last);
      }
    }
    yield { rows, messages: end - start };
  }
  if (carried.length > 0) yield { rows: carried, messages: 0 };
}

/** Every state row of one message, oldest first; the last is its newest state. */
function lifeOf(random: () => number, createdMs: number): SmsMessage[] {
  const orgId = pickOrg(random);
  const country = pickCountry(random);
  const text = pickTemplate(random)(random);
  const enc = encodingOf(text);
  const number = `${country.prefix}${digits(random, country.digits)}`;
  const created = iso(createdMs);
  const scheduled = random() < 0.03 ? iso(createdMs + Math.floor(random() * 86_400_000)) : null;
  const base: SmsMessage = {
    id: idAt(createdMs, random),
    orgId,
    projectId: `${orgId}-p${pickProject(random)}`,
    tokenId: `${orgId}-t${1 + Math.floor(random() * 3)}`,
    source: random() < 0.85 ? 'http' : random() < 0.5 ? 'legacy' : 'smpp',
    clientId: random() < 0.6 ? `cid-${digits(random, 10)}` : null,
    status: 'queued',
    statusCode: null,
    from: ['Acme', 'ACME Shop', 'Verify', '+4930123456', 'Parcel24'][Math.floor(random() * 5)]!,
    country: country.code,
    to: number,
    normalizedTo: number,
    text,
    ...enc,
    charged: true,
    pricePerSmsMicros: country.priceMicros,
    priceUserMicros: country.priceMicros * enc.messagesCount,
    currency: 'EUR',
    createdAt: created,
    chargedAt: created,
    scheduledAt: scheduled,
    sentAt: null,
    deliveredAt: null,
    updatedAt: created,
  };
  const status = pickStatus(random);
  const states: MessageStatus[] = status === 'queued' ? ['queued']
    : status === 'sent' ? ['queued', 'sent']
      : status === 'accepted' || status === 'buffered' ? ['queued', 'sent', status]
        : ['queued', 'sent', random() < 0.5 ? 'accepted' : 'buffered', status];
  const sendAt = Date.parse(scheduled ?? created) + 200 + Math.floor(random() * 3000);
  const life: SmsMessage[] = [];
  let at = createdMs;
  for (const [i, s] of states.entries()) {
    at = i === 0 ? createdMs : i === 1 ? sendAt : at + 1000 + Math.floor(random() * 60_000);
    const sentAt = i >= 1 ? iso(sendAt) : null;
    const final = FINAL_CODE[s];
    life.push({
      ...base,
      status: s,
      statusCode: final === undefined ? null : final,
      sentAt,
      deliveredAt: s === 'delivered' ? iso(at) : null,
      charged: s === 'rejected' ? false : base.charged,
      updatedAt: iso(at),
    });
  }
  return life;
}
