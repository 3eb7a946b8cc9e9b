// The wire shape of POST /sms/quote (DESIGN §4 "POST /sms/quote prices without charging"): per
// item what sending it would be (segments, encoding, country, price per segment and in total),
// and the total a send would charge, from the acceptance core's quote (core/sms/acceptance.ts).
// Schemas: schemas/sms.ts smsQuoteItemSchema, smsQuoteTotalSchema.
import { fromMicros } from '../money';
import type { PricedItem, Quote } from './acceptance';

export interface QuoteItemEntity {
  readonly index: number;
  readonly clientId: string | null;
  readonly to: string;
  readonly normalizedTo: string;
  readonly country: string;
  readonly charsCount: number;
  readonly messagesCount: number;
  readonly encoding: string;
  readonly unicode: boolean;
  readonly deliveredText: string;
  readonly pricePerSms: number;
  readonly priceUser: number;
  readonly currency: string;
}

export interface QuoteTotalEntity {
  /** Items a send would accept. */
  readonly messages: number;
  /** Their segments together. */
  readonly messagesCount: number;
  /** What a send would charge (the sum of the items' priceUser). */
  readonly price: number;
  readonly currency: string;
  /** The balance now (advisory: other sends change it). */
  readonly available: number;
  /** Whether the balance now covers `price`; a send it does not cover is a 402. */
  readonly covered: boolean;
}

export function toQuoteItemEntity(index: number, priced: PricedItem): QuoteItemEntity {
  const { input, encoded, price } = priced;
  return {
    index,
    clientId: input.clientId ?? null,
    to: input.to,
    normalizedTo: priced.normalizedTo,
    country: priced.country,
    charsCount: encoded.charsCount,
    messagesCount: encoded.messagesCount,
    encoding: encoded.encoding,
    unicode: encoded.unicode,
    deliveredText: encoded.deliveredText,
    pricePerSms: fromMicros(price.priceMicros),
    priceUser: fromMicros(priced.priceUserMicros),
    currency: price.currency,
  };
}

export function toQuoteTotal(quote: Quote, currency: string, availableMicros: number): QuoteTotalEntity {
  return {
    messages: quote.items.length,
    messagesCount: quote.items.reduce((n, i) => n + i.priced.encoded.messagesCount, 0),
    price: fromMicros(quote.totalMicros),
    currency,
    available: fromMicros(availableMicros),
    covered: quote.totalMicros <= availableMicros,
  };
}
