// The durable-consumer loop (infra/consumer.ts) over a fake pull consumer: batches in stream
// order, gathering by size or time, back-pressure, draining on stop, the stopping signal a
// retry-in-place handler relies on, resumption after an interruption, and concurrent handling.
import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import { consumeBatches, consumeEach } from '../../infra/consumer';
import { createLogger } from '../../infra/logger';

const log = createLogger('silent', { component: 'test' });
// On jest's fake clock: `sleep` (in handlers) waits on it, `pass` moves it on, running every
// timer due and the promise work they start, so no test waits for real time.
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const pass = (ms: number): Promise<void> => jest.advanceTimersByTimeAsync(ms);
beforeEach(() => { jest.useFakeTimers(); });
afterEach(() => { jest.useRealTimers(); });

/** A pull consumer whose messages the test pushes; `fail()` breaks the current pull once. */
class FakeStream {
  queue: JsMsg[] = [];
  wake: (() => void) | undefined;
  stopped = false;
  broken: Error | undefined;
  pulls = 0;
  seq = 0;

  push(...subjects: string[]): void {
    for (const subject of subjects) this.queue.push({ subject, seq: ++this.seq, data: new Uint8Array(10) } as unknown as JsMsg); // 10 bytes each
    this.wake?.();
  }

  fail(): void {
    this.broken = new Error('consumer deleted');
    this.wake?.();
  }

  js(): JetStreamClient {
    const consume = async () => pull(this);
    return { consumers: { get: async () => ({ consume }) } } as unknown as JetStreamClient;
  }
}

/** One consume() of the fake: iterates until stopped, or throws once when the stream is broken. */
function pull(fake: FakeStream): { stop(): void; [Symbol.asyncIterator](): AsyncGenerator<JsMsg> } {
  fake.pulls += 1;
  fake.stopped = false;
  return {
    stop: () => { fake.stopped = true; fake.wake?.(); },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (fake.broken) { const err = fake.broken; fake.broken = undefined; throw err; }
        const next = fake.queue.shift();
        if (next) { yield next; continue; }
        if (fake.stopped) return;
        await new Promise<void>((resolve) => { fake.wake = resolve; });
      }
    },
  };
}

const subjects = (batches: JsMsg[][]): string[][] => batches.map((b) => b.map((m) => m.subject));

/**
 * A gathering consumer that ticks every 100 ms, holds a batch of 30 bytes (3 FakeStream messages)
 * or more for up to 1 s, and records each batch with the ms since it started.
 */
function tickingConsumer(): { stream: FakeStream; batches: Array<{ subjects: string[]; at: number }>; running: { stop(): Promise<void> } } {
  const stream = new FakeStream();
  const batches: Array<{ subjects: string[]; at: number }> = [];
  const started = Date.now();
  const running = consumeBatches({
    js: stream.js(), stream: 'S', durable: 'd', pull: 100, log, maxBatch: 100, maxWaitMs: 1000, tickMs: 100, lightBytes: 30,
    handle: async (msgs) => { batches.push({ subjects: msgs.map((m) => m.subject), at: Date.now() - started }); },
  });
  return { stream, batches, running };
}

describe('durable consumer loop (infra/consumer.ts)', () => {
  test('gathering: a full batch goes at once, a partial one after maxWaitMs, in stream order', async () => {
    const stream = new FakeStream();
    const batches: JsMsg[][] = [];
    const running = consumeBatches({ js: stream.js(), stream: 'S', durable: 'd', pull: 10, log, maxBatch: 3, maxWaitMs: 50, handle: async (msgs) => { batches.push(msgs); } });
    stream.push('a', 'b', 'c', 'd');
    await pass(20);
    expect(subjects(batches)).toEqual([['a', 'b', 'c']]);
    await pass(80);
    expect(subjects(batches)).toEqual([['a', 'b', 'c'], ['d']]);
    await running.stop();
  });

  test('gathering, busy: what arrives while a partial batch is handled waits for the next tick, unless it fills a batch', async () => {
    const stream = new FakeStream();
    const batches: Array<{ subjects: string[]; at: number }> = [];
    const started = Date.now();
    const running = consumeBatches({
      js: stream.js(), stream: 'S', durable: 'd', pull: 100, log, maxBatch: 4, maxWaitMs: 200,
      handle: async (msgs) => { batches.push({ subjects: msgs.map((m) => m.subject), at: Date.now() - started }); await sleep(60); },
    });
    stream.push('a');
    await pass(230); // the first tick took ['a'] and is still handling it
    stream.push('b');
    await pass(100); // 'b' arrived during the handling: it is not handed over when that ends
    expect(batches.map((b) => b.subjects)).toEqual([['a']]);
    stream.push('c', 'd', 'e', 'f', 'g'); // a full batch goes at once, the rest waits
    await pass(30);
    expect(batches.map((b) => b.subjects)).toEqual([['a'], ['b', 'c', 'd', 'e']]);
    await pass(250);
    expect(batches.map((b) => b.subjects)).toEqual([['a'], ['b', 'c', 'd', 'e'], ['f', 'g']]);
    expect(batches[2]?.at).toBeGreaterThanOrEqual(390);
    await running.stop();
  });

  test('gathering with tickMs and lightBytes: a light batch goes at the first tick, not after maxWaitMs', async () => {
    const { stream, batches, running } = tickingConsumer();
    await pass(10);
    stream.push('a', 'b');
    await pass(80);
    expect(batches).toEqual([]);
    await pass(20);
    expect(batches).toEqual([{ subjects: ['a', 'b'], at: 100 }]);
    await running.stop();
  });

  test('gathering with tickMs and lightBytes: a busy stream gathers until the oldest would wait past maxWaitMs', async () => {
    const { stream, batches, running } = tickingConsumer();
    await pass(10);
    stream.push('a', 'b', 'c'); // 30 bytes, as many as lightBytes: they wait for more
    await pass(300);
    stream.push('d');
    await pass(580); // 890: the ticks up to 800 left them; a gets to 990 by the tick at 1,000, which would be the last within 1,000
    expect(batches).toEqual([]);
    await pass(110);
    expect(batches).toEqual([{ subjects: ['a', 'b', 'c', 'd'], at: 1000 }]);
    stream.push('e'); // light again: the next tick
    await pass(100);
    expect(batches).toEqual([{ subjects: ['a', 'b', 'c', 'd'], at: 1000 }, { subjects: ['e'], at: 1100 }]);
    await running.stop();
  });

  test('gathering: stopping drains every buffered message, a partial batch after a full one included', async () => {
    const stream = new FakeStream();
    const batches: string[][] = [];
    const running = consumeBatches({ js: stream.js(), stream: 'S', durable: 'd', pull: 100, log, maxBatch: 2, maxWaitMs: 10_000, drainOnStop: true, handle: async (msgs) => { batches.push(msgs.map((m) => m.subject)); } });
    stream.push('a', 'b', 'c');
    await pass(20);
    await running.stop();
    expect(batches).toEqual([['a', 'b'], ['c']]);
  });

  test('pump (maxWaitMs 0): whatever arrived while the previous batch was handled forms the next', async () => {
    const stream = new FakeStream();
    const batches: JsMsg[][] = [];
    let release: () => void = () => undefined;
    const running = consumeBatches({
      js: stream.js(), stream: 'S', durable: 'd', pull: 10, log, maxBatch: 50, maxWaitMs: 0,
      handle: async (msgs) => { batches.push(msgs); if (batches.length === 1) await new Promise<void>((resolve) => { release = resolve; }); },
    });
    stream.push('a');
    await pass(10);
    stream.push('b', 'c');
    await pass(10);
    release();
    await pass(10);
    expect(subjects(batches)).toEqual([['a'], ['b', 'c']]);
    await running.stop();
  });

  test('stop aborts the stopping signal first, then drains what is buffered when asked to', async () => {
    const stream = new FakeStream();
    const seen: Array<{ subjects: string[]; aborted: boolean }> = [];
    const running = consumeBatches({
      js: stream.js(), stream: 'S', durable: 'd', pull: 10, log, maxBatch: 100, maxWaitMs: 10_000, drainOnStop: true,
      handle: async (msgs, stopping) => { seen.push({ subjects: msgs.map((m) => m.subject), aborted: stopping.aborted }); },
    });
    stream.push('a', 'b');
    await pass(10);
    await running.stop();
    expect(seen).toEqual([{ subjects: ['a', 'b'], aborted: true }]);
  });

  test('a batch handler that throws does not stop the loop', async () => {
    const stream = new FakeStream();
    const batches: string[][] = [];
    const running = consumeBatches({
      js: stream.js(), stream: 'S', durable: 'd', pull: 10, log, maxBatch: 1, maxWaitMs: 0,
      handle: async (msgs) => { batches.push(msgs.map((m) => m.subject)); if (batches.length === 1) throw new Error('boom'); },
    });
    stream.push('a', 'b');
    await pass(20);
    expect(batches).toEqual([['a'], ['b']]);
    await running.stop();
  });

  test('an interrupted pull resumes (after onInterrupted) and goes on delivering', async () => {
    const stream = new FakeStream();
    const seen: string[] = [];
    let interrupted = 0;
    const running = consumeEach({
      js: stream.js(), stream: 'S', durable: 'd', pull: 10, log, handle: async (msg) => { seen.push(msg.subject); },
      onInterrupted: async () => { interrupted += 1; },
    });
    stream.push('a');
    await pass(10);
    stream.fail();
    await pass(700);
    stream.push('b');
    await pass(20);
    expect(seen).toEqual(['a', 'b']);
    expect(interrupted).toBe(1);
    expect(stream.pulls).toBe(2);
    await running.stop();
  });

  test('each: messages are handled concurrently; idle() waits for the ones in flight', async () => {
    const stream = new FakeStream();
    let inFlight = 0;
    let most = 0;
    const running = consumeEach({
      js: stream.js(), stream: 'S', durable: 'd', pull: 10, log,
      handle: async () => { inFlight += 1; most = Math.max(most, inFlight); await sleep(30); inFlight -= 1; },
    });
    stream.push('a', 'b', 'c');
    await pass(10);
    const stopped = running.stop();
    await pass(30);
    await stopped;
    await running.idle();
    expect(most).toBe(3);
    expect(inFlight).toBe(0);
  });
});
