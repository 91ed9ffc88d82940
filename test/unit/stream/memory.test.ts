/** The embedded stream transport: order, resume by entry id, and its bounds. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { memoryStreams } from '../../../src/stream/memory.js';
import type { StreamEvent } from '../../../src/stream/events.js';
import type { StreamEntry, StreamKey, StreamTransport } from '../../../src/stream/transport.js';

const key: StreamKey = { sessionId: 's1', requestId: 'r1' };
const delta = (text: string): StreamEvent => ({ type: 'text-delta', text, step: 0 });

/** Read `count` entries of `key` after `after`, then stop. */
async function take(
  transport: StreamTransport,
  count: number,
  after?: string,
  at: StreamKey = key,
): Promise<StreamEntry[]> {
  const out: StreamEntry[] = [];
  if (count === 0) return out;
  for await (const entry of transport.read(at, after === undefined ? {} : { after })) {
    out.push(entry);
    if (out.length === count) break;
  }
  return out;
}

const texts = (entries: StreamEntry[]) =>
  entries.map((e) => (e.event.type === 'text-delta' ? e.event.text : e.event.type));

describe('memoryStreams', () => {
  it('gives a reader every entry in order, with increasing ids', async () => {
    const bus = memoryStreams();
    for (const t of ['a', 'b', 'c']) bus.append(key, delta(t));
    const entries = await take(bus, 3);
    expect(texts(entries)).toEqual(['a', 'b', 'c']);
    expect(entries.map((e) => e.id)).toEqual(['1', '2', '3']);
  });

  it('wakes a waiting reader when an entry is appended later', async () => {
    const bus = memoryStreams();
    const reading = take(bus, 2);
    bus.append(key, delta('late'));
    bus.append(key, delta('later'));
    expect(texts(await reading)).toEqual(['late', 'later']);
  });

  it('resumes after an id with the next entry: nothing lost, nothing doubled', async () => {
    const bus = memoryStreams();
    for (let i = 0; i < 10; i++) bus.append(key, delta(String(i)));
    const head = await take(bus, 4);
    const rest = await take(bus, 6, head.at(-1)!.id);
    expect(texts([...head, ...rest])).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
  });

  it('keeps streams apart by session and request', async () => {
    const bus = memoryStreams();
    const other = { sessionId: 's1', requestId: 'r2' };
    bus.append(key, delta('mine'));
    bus.append(other, delta('theirs'));
    expect(texts(await take(bus, 1))).toEqual(['mine']);
    expect(texts(await take(bus, 1, undefined, other))).toEqual(['theirs']);
  });

  it('a reader that never reads does not hold the writer: appends return at once', () => {
    const bus = memoryStreams({ maxEntriesPerStream: 100 });
    const idle = bus.read(key)[Symbol.asyncIterator]();
    void idle.next();
    const started = performance.now();
    for (let i = 0; i < 50_000; i++) bus.append(key, delta('x'));
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('keeps at most maxEntriesPerStream (plus an eighth) entries; a late reader skips the trimmed ones', async () => {
    const bus = memoryStreams({ maxEntriesPerStream: 8 });
    for (let i = 1; i <= 30; i++) bus.append(key, delta(String(i)));
    // 30 appended: the window is the newest 8 to 9 entries.
    const [first] = await take(bus, 1);
    expect(Number(first!.id)).toBeGreaterThanOrEqual(30 - 9 + 1);
    const rest = await take(bus, 30 - Number(first!.id), first!.id);
    expect(rest.at(-1)?.id).toBe('30');
    // Resuming from an id that was trimmed starts at the oldest kept entry.
    const fromOld = await take(bus, 1, '2');
    expect(fromOld[0]!.id).toBe(first!.id);
  });

  it('drops the least recently written stream past maxStreams', async () => {
    const bus = memoryStreams({ maxStreams: 2 });
    const k = (r: string) => ({ sessionId: 's', requestId: r });
    bus.append(k('a'), delta('a'));
    bus.append(k('b'), delta('b'));
    bus.append(k('a'), delta('a2'));
    bus.append(k('c'), delta('c'));
    // b was written least recently: gone. A reader of it waits for new entries.
    const waiting = take(bus, 1, undefined, k('b'));
    bus.append(k('b'), delta('b-new'));
    expect(texts(await waiting)).toEqual(['b-new']);
    // Writing b again dropped a (now the least recently written); c stays.
    expect(texts(await take(bus, 1, undefined, k('c')))).toEqual(['c']);
  });

  it('drops old streams once the bytes kept pass maxBytes', async () => {
    const bus = memoryStreams({ maxBytes: 1000 });
    const k = (r: string) => ({ sessionId: 's', requestId: r });
    bus.append(k('old'), delta('o'.repeat(600)));
    bus.append(k('new'), delta('n'.repeat(600)));
    expect(texts(await take(bus, 1, undefined, k('new')))).toEqual(['n'.repeat(600)]);
    const waiting = take(bus, 1, undefined, k('old'));
    bus.append(k('old'), delta('again'));
    expect(texts(await waiting)).toEqual(['again']);
  });

  it('ends a waiting read when its signal aborts, without another append', async () => {
    const bus = memoryStreams();
    const stop = new AbortController();
    const seen: string[] = [];
    let first!: () => void;
    const gotFirst = new Promise<void>((resolve) => (first = resolve));
    bus.append(key, delta('one'));
    const reading = (async () => {
      for await (const entry of bus.read(key, { signal: stop.signal })) {
        seen.push(texts([entry])[0]!);
        first();
      }
    })();
    await gotFirst;
    stop.abort();
    await reading;
    bus.append(key, delta('two'));
    expect(seen).toEqual(['one']);
  });

  it('refuses an after that is not one of its ids, naming it', async () => {
    const bus = memoryStreams();
    await expect(take(bus, 1, 'abc-0')).rejects.toThrow(/'after' must be an entry id.*'abc-0'/);
    await expect(take(bus, 1, 'abc-0')).rejects.toBeInstanceOf(ConfigError);
  });

  it('refuses bounds that are not positive integers', () => {
    expect(() => memoryStreams({ maxStreams: 0 })).toThrow(/maxStreams must be a positive integer/);
    expect(() => memoryStreams({ ttlMs: 1.5 })).toThrow(/ttlMs must be a positive integer/);
  });
});
