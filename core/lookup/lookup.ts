// A number lookup as the domain knows it, its wire shape (spec 1 §2.4), and the service that
// validates, prices, charges and records one (DESIGN §4: charged at the lookup price).
import { AppError, OutcomeUnknownError, unconfirmed, validationError } from '../errors';
import { newId } from '../ids';
import { fromMicros } from '../money';
import type { Funds, PriceBook } from '../sms/ports';
import { checkPhoneNumber } from '../sms/phone';
import { checkLookupRequest } from '../sms/validate';
import type { HlrProvider } from './hlr';
import type { HoldRef } from '../bus/names';

export type { Lookup } from '../bus/records';
import type { Lookup } from '../bus/records';

export function toLookupEntity(l: Lookup): Record<string, unknown> {
  return {
    id: l.id, status: l.status, country: l.country, to: l.to, normalizedTo: l.normalizedTo, subscriberStatus: l.subscriberStatus,
    statusCode: l.statusCode, imsi: l.imsi, servingMsc: l.servingMsc, ported: l.ported, roaming: l.roaming, network: l.network,
    charged: l.charged, pricePerSms: fromMicros(l.priceMicros), createdAt: l.createdAt, deliveredAt: l.deliveredAt,
  };
}

export interface LookupStore {
  /** Stores the lookup and queues it for history, naming the charge hold its stream message settles. */
  put(lookup: Lookup, hold?: HoldRef): Promise<void>;
}

export class LookupService {
  constructor(private readonly deps: { prices: PriceBook; funds: Funds; hlr: HlrProvider; store: LookupStore }) {}

  async run(submitter: { orgId: string; projectId: string | null; tokenId: string; source: 'http' | 'legacy' }, body: unknown): Promise<Lookup> {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new AppError('BODY_NOT_OBJECT', 'the body must be a JSON object: { "to": "+4915112345678" }');
    const checked = checkLookupRequest(body);
    if (!checked.ok) {
      if ('shape' in checked) throw new AppError('WRONG_SHAPE', `field "${checked.shape.field}" ${checked.shape.message}`);
      throw validationError(checked.fields);
    }
    const phone = checkPhoneNumber(checked.value.to);
    if (!phone.ok) throw validationError({ to: [phone.message] });
    const price = this.deps.prices.price(submitter.orgId, 'lookup', phone.country);
    if (!price) throw validationError({ to: [`no lookup price for country ${phone.country}`] });
    // Charged and held under the lookup's id until the lookup is on the stream (the charge settler refunds it otherwise).
    const id = newId();
    if (!(await this.deps.funds.charge(submitter.orgId, price.priceMicros, { id }))) throw new AppError('INSUFFICIENT_FUNDS', 'the balance does not cover this lookup; add funds and retry');
    try {
      const createdAt = new Date().toISOString();
      const answer = await this.deps.hlr.lookup(phone.normalized, phone.country);
      const doneAt = new Date().toISOString();
      const lookup: Lookup = {
        ...answer, id, orgId: submitter.orgId, projectId: submitter.projectId ?? '', tokenId: submitter.tokenId, source: submitter.source,
        country: phone.country, to: checked.value.to, normalizedTo: phone.normalized, charged: true, priceMicros: price.priceMicros,
        currency: price.currency, createdAt, deliveredAt: doneAt, updatedAt: doneAt,
      };
      await this.deps.store.put(lookup, { orgId: submitter.orgId, holdId: id });
      this.deps.funds.settle(submitter.orgId, id);
      return lookup;
    } catch (err) {
      if (err instanceof OutcomeUnknownError) throw unconfirmed(err, 'the lookup', 'retry with backoff');
      await this.deps.funds.credit(submitter.orgId, price.priceMicros, id);
      throw new AppError('INTERNAL', 'the lookup failed and was not charged; retry with backoff', { cause: err });
    }
  }
}
