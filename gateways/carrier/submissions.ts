// carrier.submit → submit_sm: each accepted message is routed, split into its segments and
// submitted on the route's bind; every segment ends as a `submitted` or `submit_failed` event.
// A message is acknowledged only once every segment's event is on the stream; throttling and a
// missing bind make a segment wait and try again, never fail.
import type { JsMsg } from '@nats-io/jetstream';
import type { PduOptions } from 'smpp';
import type { CarrierEvent, CarrierSubmit } from '../../core/carrier';
import type { CarrierRoute } from '../../config';
import type { Logger } from '../../infra/logger';
import { decode } from '../../core/bus';
import { STATUS } from '../smpp/protocol';
import { backoff, FIRST_RETRY_MS, sleep, StopError, type CarrierWriter } from './events';
import { pickRoute, submitPdus } from './rules';
import type { SmscBind } from './smsc-bind';

const WORKING_EVERY_MS = 20_000;
const NAK_DELAY_MS = 1000;

export class CarrierSubmissions {
  constructor(
    private readonly routes: readonly CarrierRoute[],
    private readonly binds: ReadonlyMap<string, SmscBind>,
    private readonly writer: CarrierWriter,
    private readonly log: Logger,
    private readonly signal: AbortSignal,
  ) {}

  /** Handles one carrier.submit message: ack once done, nak to try again later, term when unreadable. */
  async onMessage(msg: JsMsg): Promise<void> {
    let submit: CarrierSubmit;
    try {
      submit = decode('carrierSubmit', msg.data);
    } catch (err) {
      this.log.error({ err, seq: msg.seq }, 'carrier: unreadable carrier.submit message dropped');
      msg.term();
      return;
    }
    const working = setInterval(() => msg.working(), WORKING_EVERY_MS);
    try {
      if (await this.handle(submit)) msg.ack();
      else msg.nak();
    } catch (err) {
      if (!(err instanceof StopError)) this.log.error({ err, messageId: submit.messageId }, 'carrier: submission failed; will be retried');
      msg.nak(NAK_DELAY_MS);
    } finally {
      clearInterval(working);
    }
  }

  /** True when every segment has its outcome event on the stream. */
  private async handle(submit: CarrierSubmit): Promise<boolean> {
    const route = pickRoute(this.routes, submit.to);
    let pdus: PduOptions[] | undefined;
    try {
      pdus = submitPdus(submit);
    } catch (err) {
      this.log.error({ err, messageId: submit.messageId }, 'carrier: text cannot be encoded as declared');
    }
    const segments = pdus?.length ?? (Number.isInteger(submit.segments) && submit.segments > 0 ? submit.segments : 1);
    if (pdus && pdus.length !== submit.segments) this.log.warn({ messageId: submit.messageId, split: pdus.length, given: submit.segments }, 'carrier: segment count differs from the hand-off; using the split');
    if (!route) {
      await this.failAll(submit, segments, 'none', null, 'no route');
      return true;
    }
    if (!pdus) {
      await this.failAll(submit, segments, route.name, STATUS.ESME_RINVDCS, 'text cannot be encoded as declared');
      return true;
    }
    const bind = this.binds.get(route.name);
    if (!bind) throw new Error(`no bind for route ${route.name}`);
    const done = await Promise.all(pdus.map((options, segment) => this.submitSegment(bind, submit, options, segment, segments)));
    return done.every(Boolean);
  }

  private async submitSegment(bind: SmscBind, submit: CarrierSubmit, options: PduOptions, segment: number, segments: number): Promise<boolean> {
    const route = bind.route.name;
    let wait = FIRST_RETRY_MS;
    while (!this.signal.aborted) {
      const result = await bind.submit(options, (carrierMessageId) => {
        const event: CarrierEvent = { kind: 'submitted', messageId: submit.messageId, segment, segments, carrier: route, carrierMessageId, at: new Date().toISOString() };
        return this.writer.record(route, carrierMessageId, { messageId: submit.messageId, segment, segments }, () =>
          this.writer.persist('submitted event', () => this.writer.publishEvent(event, `${route}:${carrierMessageId}:submitted`)));
      });
      if (result.kind === 'accepted') {
        await result.recorded;
        return true;
      }
      if (result.kind === 'refused' && result.status !== STATUS.ESME_RTHROTTLED) {
        const event: CarrierEvent = {
          kind: 'submit_failed', messageId: submit.messageId, segment, segments, carrier: route,
          commandStatus: result.status, reason: `submit_sm_resp command_status 0x${result.status.toString(16).padStart(8, '0')}`, at: new Date().toISOString(),
        };
        await this.writer.persist('submit_failed event', () => this.writer.publishEvent(event, `${route}:${submit.messageId}:${segment}:submit_failed`));
        return true;
      }
      // Throttled, or no bind right now: the segment waits and goes again, it never fails.
      if (result.kind === 'unavailable') this.log.debug({ carrier: route, reason: result.reason }, 'carrier: segment waits for the bind');
      await sleep(wait, this.signal);
      wait = backoff(wait);
    }
    return false;
  }

  private async failAll(submit: CarrierSubmit, segments: number, carrier: string, commandStatus: number | null, reason: string): Promise<void> {
    await Promise.all(Array.from({ length: segments }, (_, segment) => {
      const event: CarrierEvent = { kind: 'submit_failed', messageId: submit.messageId, segment, segments, carrier, commandStatus, reason, at: new Date().toISOString() };
      return this.writer.persist('submit_failed event', () => this.writer.publishEvent(event, `${carrier}:${submit.messageId}:${segment}:submit_failed`));
    }));
  }
}
