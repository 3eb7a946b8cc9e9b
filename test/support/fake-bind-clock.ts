// A clock for the SMPP failed-bind throttle (gateways/smpp/bind-throttle.ts BindClock) that tests
// move by hand: `t` is now, and every delay asked for is recorded and resolves at once (no sleeps).
import type { BindClock } from '../../gateways/smpp/bind-throttle';

export class FakeBindClock implements BindClock {
  readonly delays: number[] = [];

  constructor(public t: number) {}

  now(): number {
    return this.t;
  }

  delay(ms: number): Promise<void> {
    this.delays.push(ms);
    return Promise.resolve();
  }
}
