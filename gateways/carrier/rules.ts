// The carrier connector's pure rules (docs/carrier.md, unit-tested): which route serves a
// destination, the submit_sm of each segment we hand to an SMSC, how an SMSC's message id
// becomes a KV key, how addresses from an SMSC are normalized, and the stable id of an
// inbound message.
import { createHash } from 'node:crypto';
import type { PduOptions } from 'smpp';
import type { CarrierSubmit } from '../../core/carrier';
import { splitSegments, toGsm7Bytes, toUcs2Bytes } from '../../core/sms';
import type { CarrierRoute } from '../../config';
import { concatRef, DATA_CODINGS, ESM_UDHI, withConcatUdh } from '../smpp/protocol';

const TON_INTERNATIONAL = 1;
const NPI_ISDN = 1;
const TON_ALPHANUMERIC = 5;
/** registered_delivery 1: a receipt for every final outcome (and the intermediate ones the SMSC sends). */
const RECEIPT_ALWAYS = 1;

/** The route with the longest prefix matching the destination's digits ('' matches all). */
export function pickRoute(routes: readonly CarrierRoute[], to: string): CarrierRoute | undefined {
  const digits = to.replace(/\D/g, '');
  let best: { route: CarrierRoute; length: number } | undefined;
  for (const route of routes) {
    for (const prefix of route.prefixes) {
      if (digits.startsWith(prefix) && (!best || prefix.length > best.length)) best = { route, length: prefix.length };
    }
  }
  return best?.route;
}

const SAFE_ID = /^[A-Za-z0-9_-]+$/;

/** carrierIds key: the route, then the SMSC's id with every byte outside [A-Za-z0-9_-] as =XX. */
export function carrierIdKey(route: string, carrierMessageId: string): string {
  // Most SMSCs' ids need no escaping (hex, decimal, UUIDs): one test instead of one per byte.
  if (SAFE_ID.test(carrierMessageId)) return `${route}.${carrierMessageId}`;
  let safe = '';
  for (const byte of Buffer.from(carrierMessageId, 'utf8')) {
    const ch = String.fromCharCode(byte);
    safe += /[A-Za-z0-9_-]/.test(ch) ? ch : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${route}.${safe || '=00'}`;
}

/** One submit_sm per segment: UDH-concatenated when there is more than one. */
export function submitPdus(submit: Pick<CarrierSubmit, 'messageId' | 'from' | 'to' | 'text' | 'encoding'>): PduOptions[] {
  const gsm = submit.encoding === 'GSM-7';
  const segments = splitSegments(submit.text, submit.encoding).map((part) => (gsm ? toGsm7Bytes(part) : toUcs2Bytes(part)));
  const bodies = withConcatUdh(segments, concatRef(submit.messageId));
  const numeric = /^\+?\d+$/.test(submit.from);
  return bodies.map((body) => ({
    source_addr_ton: numeric ? TON_INTERNATIONAL : TON_ALPHANUMERIC,
    source_addr_npi: numeric ? NPI_ISDN : 0,
    source_addr: numeric ? submit.from.replace(/^\+/, '') : submit.from,
    dest_addr_ton: TON_INTERNATIONAL,
    dest_addr_npi: NPI_ISDN,
    destination_addr: submit.to.replace(/\D/g, ''),
    esm_class: bodies.length > 1 ? ESM_UDHI : 0,
    registered_delivery: RECEIPT_ALWAYS,
    data_coding: gsm ? DATA_CODINGS.GSM7 : DATA_CODINGS.UCS2,
    short_message: body,
  }));
}

/** '+digits' for a numeric address, the address itself for an alphanumeric one. */
export function normalizeAddress(addr: string, ton: number | undefined): string {
  if (ton === TON_ALPHANUMERIC || !/^\+?\d+$/.test(addr)) return addr;
  return `+${addr.replace(/^\+/, '')}`;
}

/**
 * Stable id of an inbound message: the route and a hash of sender, recipient, text and the
 * minute it arrived. A deliver_sm sent again (new sequence_number) in the same minute maps to
 * the same id and is stored once.
 */
export function inboundId(route: string, from: string, to: string, text: string, at: Date): string {
  const minute = at.toISOString().slice(0, 16);
  const hash = createHash('sha256').update([from, to, text, minute].join('\u0000')).digest('hex').slice(0, 32);
  return `${route}-${hash}`;
}
