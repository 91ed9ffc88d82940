/** ClientCalls: per-call signals, the send turn of a session, and closing. */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ClientCalls } from '../../../src/client/client-calls.js';

/** A connection stand-in that hands `fn` the signal it was given, as Temporal's does. */
function connection() {
  const signals: AbortSignal[] = [];
  return {
    signals,
    withAbortSignal<R>(signal: AbortSignal, fn: () => Promise<R>): Promise<R> {
      signals.push(signal);
      return fn();
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ClientCalls.run', () => {
  it('gives every call a signal of its own and adds no listener to the client signal', async () => {
    const calls = new ClientCalls();
    const conn = connection();
    for (let i = 0; i < 50; i++) await calls.run(conn, async () => i);
    expect(new Set(conn.signals).size).toBe(50);
    expect(getEventListeners(calls.signal, 'abort')).toHaveLength(0);
    expect(calls.inFlight).toBe(0);
  });

  it('close() aborts the calls in flight with its reason, and later calls at once', async () => {
    const calls = new ClientCalls();
    const conn = connection();
    const reason = new Error('client closed');
    const inFlight = calls.run(
      conn,
      () =>
        new Promise((_, reject) =>
          conn.signals.at(-1)!.addEventListener('abort', () => reject(conn.signals.at(-1)!.reason)),
        ),
    );
    expect(calls.inFlight).toBe(1);
    calls.close(reason);
    await expect(inFlight).rejects.toBe(reason);
    await calls.run(conn, async () => undefined);
    expect(conn.signals.at(-1)!.aborted).toBe(true);
    expect(calls.closed).toBe(true);
  });
});

describe('ClientCalls.sendTurn', () => {
  it('hands turns out in call order, each once the one before was released', async () => {
    const calls = new ClientCalls();
    const order: string[] = [];
    const first = await calls.sendTurn('s');
    const second = calls.sendTurn('s').then((release) => (order.push('second'), release));
    const third = calls.sendTurn('s').then((release) => (order.push('third'), release));
    const otherSession = await calls.sendTurn('t'); // another key does not wait
    await tick();
    expect(order).toEqual([]);
    first();
    (await second)();
    (await third)();
    otherSession();
    expect(order).toEqual(['second', 'third']);
    await tick();
    expect(calls.sessionsWithQueuedSends).toBe(0);
  });

  it('a waiting turn whose signal aborts returns at once; the next still waits for the earlier one', async () => {
    const calls = new ClientCalls();
    const first = await calls.sendTurn('s');
    const controller = new AbortController();
    const aborted = calls.sendTurn('s', controller.signal);
    let thirdGot = false;
    const third = calls.sendTurn('s').then((release) => ((thirdGot = true), release));
    controller.abort();
    (await aborted)();
    await tick();
    expect(thirdGot).toBe(false);
    first();
    (await third)();
    expect(thirdGot).toBe(true);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe('ClientCalls.whenWaitedOn', () => {
  it('tells the send holding the turn once, when a later send of its session starts waiting', async () => {
    const calls = new ClientCalls();
    const first = await calls.sendTurn('s');
    let told = 0;
    const stop = calls.whenWaitedOn('s', () => told++);
    await calls.sendTurn('t'); // another session's send does not wait for it
    expect(told).toBe(0);
    const second = calls.sendTurn('s');
    void calls.sendTurn('s');
    expect(told).toBe(1);
    stop();
    first();
    (await second)();
  });

  it('tells a send at once when sends already queued behind it when it got the turn', async () => {
    const calls = new ClientCalls();
    const first = await calls.sendTurn('s');
    const second = calls.sendTurn('s');
    void calls.sendTurn('s');
    first();
    const release = await second;
    let told = 0;
    calls.whenWaitedOn('s', () => told++);
    expect(told).toBe(1);
    release();
  });

  it('tells nobody after the watch stopped, and a send that aborted while waiting holds no turn', async () => {
    const calls = new ClientCalls();
    const first = await calls.sendTurn('s');
    let told = 0;
    calls.whenWaitedOn('s', () => told++)();
    const controller = new AbortController();
    const aborted = calls.sendTurn('s', controller.signal);
    controller.abort();
    (await aborted)();
    expect(told).toBe(0);
    // The first still holds the turn, already waited on (by the aborted one).
    let firstTold = 0;
    calls.whenWaitedOn('s', () => firstTold++);
    expect(firstTold).toBe(1);
    first();
  });
});

describe('ClientCalls.takeStart', () => {
  it('reports how a watched Update start stood, once; unwatched ids stay unknown', async () => {
    const calls = new ClientCalls();
    const startUpdate = calls.interceptor().startUpdate!;
    const answer = (updateId: string, outcome?: object) =>
      startUpdate({} as never, async () => ({ updateId, workflowRunId: 'r', outcome }));
    calls.watchStart('a');
    calls.watchStart('b');
    await answer('a');
    await answer('b', { success: {} });
    await answer('c');
    expect(calls.takeStart('a')).toBe('running');
    expect(calls.takeStart('b')).toBe('completed');
    expect(calls.takeStart('c')).toBe('unknown');
    expect(calls.takeStart('a')).toBe('unknown');
  });
});
