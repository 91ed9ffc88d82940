/**
 * The pure rules of shared budgets: windows, leases granted far from and near the cap,
 * refusals naming the cap, a request answered once, spend counted in the lease's window.
 */
import { describe, expect, it } from 'vitest';
import {
  applyLease,
  leaseFits,
  newSharedBudget,
  raiseSharedCaps,
  sharedBudgetKey,
  sharedBudgetStatusOf,
  windowEndOf,
  windowStartOf,
  zeroAmounts,
  type LeaseRequest,
} from '../../../src/common/shared-budgets.js';

const at = (iso: string) => Date.parse(iso);
const request = (over: Partial<LeaseRequest>): LeaseRequest => ({
  key: 'tenant:acme',
  sessionId: 's1',
  leaseId: 's1/1',
  caps: { modelCalls: 100 },
  need: { modelCalls: 1 },
  ask: { modelCalls: 4 },
  ...over,
});
const spent = (n: number) => ({ ...zeroAmounts(), modelCalls: n });

describe('windows', () => {
  it('start and end on UTC calendar boundaries, or every n ms', () => {
    const now = at('2026-12-05T13:45:10.500Z');
    expect(windowStartOf('hour', now)).toBe(at('2026-12-05T13:00:00Z'));
    expect(windowStartOf('day', now)).toBe(at('2026-12-05T00:00:00Z'));
    expect(windowStartOf('month', now)).toBe(at('2026-12-01T00:00:00Z'));
    expect(windowEndOf('month', at('2026-12-01T00:00:00Z'))).toBe(at('2027-01-01T00:00:00Z'));
    expect(windowEndOf('day', at('2026-12-05T00:00:00Z'))).toBe(at('2026-12-06T00:00:00Z'));
    expect(windowStartOf(5000, 12_345)).toBe(10_000);
    expect(windowEndOf(5000, 10_000)).toBe(15_000);
    expect(windowStartOf(undefined, now)).toBe(0);
    expect(windowEndOf(undefined, 0)).toBeUndefined();
  });

  it('name the key', () => {
    expect(sharedBudgetKey({ scope: 'tenant', window: 'day' }, 'a', 'acme')).toBe(
      'tenant:acme:day',
    );
    expect(sharedBudgetKey({ scope: 'agent', window: 3000 }, 'a', undefined)).toBe(
      'agent:a:3000ms',
    );
    expect(sharedBudgetKey({ scope: 'agent' }, 'a', 'acme')).toBe('agent:a');
  });
});

describe('leases', () => {
  it('far from the cap grant what is asked; near it, exactly what is needed, to give back at idle', () => {
    const state = newSharedBudget('tenant:acme', undefined, 0);
    expect(applyLease(state, request({}), 0)).toEqual({
      granted: { modelCalls: 4 },
      returnAtIdle: false,
      left: { modelCalls: 96 },
      caps: { modelCalls: 100 },
    });
    // 96 left: 4 x 8 fits. With 10 left it does not.
    const near = newSharedBudget('tenant:acme', undefined, 0);
    expect(applyLease(near, request({ caps: { modelCalls: 10 } }), 0)).toEqual({
      granted: { modelCalls: 1 },
      returnAtIdle: true,
      left: { modelCalls: 9 },
      caps: { modelCalls: 10 },
    });
  });

  it('refuse naming the cap, counting what other leases hold', () => {
    const state = newSharedBudget('tenant:acme', undefined, 0);
    const caps = { modelCalls: 2 };
    applyLease(state, request({ caps, leaseId: 'a/1', sessionId: 'a' }), 0);
    applyLease(state, request({ caps, leaseId: 'b/1', sessionId: 'b' }), 0);
    expect(applyLease(state, request({ caps, leaseId: 'c/1', sessionId: 'c' }), 0)).toEqual({
      refused: { budget: 'modelCalls', limit: 2, spent: 0, leased: 2, reserved: 1 },
    });
    // a gives its lease back having spent it: still no room; b gives back unspent: room.
    applyLease(
      state,
      request({
        caps,
        leaseId: 'a/2',
        sessionId: 'a',
        need: undefined,
        returning: { id: 'a/1', spent: spent(1) },
      }),
      0,
    );
    expect(applyLease(state, request({ caps, leaseId: 'c/2', sessionId: 'c' }), 0)).toMatchObject({
      refused: { spent: 1, leased: 1 },
    });
    applyLease(
      state,
      request({
        caps,
        leaseId: 'b/2',
        sessionId: 'b',
        need: undefined,
        returning: { id: 'b/1', spent: spent(0) },
      }),
      0,
    );
    expect(applyLease(state, request({ caps, leaseId: 'c/3', sessionId: 'c' }), 0)).toMatchObject({
      granted: { modelCalls: 1 },
    });
    expect(sharedBudgetStatusOf(state, 0)).toMatchObject({
      spent: { modelCalls: 1 },
      leased: { modelCalls: 1 },
      leases: 1,
    });
  });

  it('answer a request once: a retry gets the same answer and takes nothing more', () => {
    const state = newSharedBudget('tenant:acme', undefined, 0);
    const first = applyLease(state, request({ caps: { modelCalls: 8 } }), 0);
    const again = applyLease(state, request({ caps: { modelCalls: 8 } }), 0);
    expect(again).toEqual(first);
    expect(sharedBudgetStatusOf(state, 0).leased.modelCalls).toBe(1);
    // A return retried counts once.
    const back = request({
      leaseId: 's1/2',
      need: undefined,
      returning: { id: 's1/1', spent: spent(1) },
    });
    applyLease(state, back, 0);
    applyLease(state, back, 0);
    expect(sharedBudgetStatusOf(state, 0).spent.modelCalls).toBe(1);
  });

  it('count spend in the window the lease was granted in; a new window starts from nothing', () => {
    const state = newSharedBudget('tenant:acme:1000ms', 1000, 500);
    const caps = { modelCalls: 1 };
    expect(applyLease(state, request({ caps, window: 1000 }), 500)).toMatchObject({
      windowEnd: 1000,
    });
    // Next window: the old lease does not hold the new window's room.
    expect(
      applyLease(state, request({ caps, window: 1000, leaseId: 's2/1', sessionId: 's2' }), 1200),
    ).toMatchObject({ granted: { modelCalls: 1 }, windowEnd: 2000 });
    applyLease(
      state,
      request({
        caps,
        leaseId: 's1/2',
        need: undefined,
        returning: { id: 's1/1', spent: spent(1) },
      }),
      1300,
    );
    const status = sharedBudgetStatusOf(state, 1300);
    expect(status.spent.modelCalls).toBe(0);
    expect(status.previous).toEqual([{ windowStart: 0, spent: spent(1) }]);
  });

  it('a raise holds over the caps sessions give, and a lease says the caps it was granted under', () => {
    const state = newSharedBudget('tenant:acme', undefined, 0);
    raiseSharedCaps(state, { caps: { modelCalls: 0 }, identity: 'ops', at: 0 });
    expect(applyLease(state, request({}), 0)).toMatchObject({ refused: { limit: 0 } });
    // A cap the agents do not give, set by a raise, reaches the session with the lease.
    const other = newSharedBudget('tenant:acme', undefined, 0);
    raiseSharedCaps(other, { caps: { toolCalls: 2 }, identity: 'ops', at: 0 });
    expect(applyLease(other, request({}), 0)).toMatchObject({
      granted: { modelCalls: 4, toolCalls: 0 },
      caps: { modelCalls: 100, toolCalls: 2 },
    });
  });

  it('a cap the request needs nothing of refuses nothing, even when passed', () => {
    const state = newSharedBudget('tenant:acme', undefined, 0);
    const caps = { modelCalls: 10, inputTokens: 5 };
    applyLease(state, request({ caps, need: { modelCalls: 1, inputTokens: 5 } }), 0);
    // Its spend came back past the input cap (an estimate's error).
    applyLease(
      state,
      request({
        caps,
        leaseId: 's1/2',
        need: undefined,
        returning: { id: 's1/1', spent: { ...spent(1), inputTokens: 9 } },
      }),
      0,
    );
    expect(
      applyLease(state, request({ caps, leaseId: 's1/3', need: { toolCalls: 1 } }), 0),
    ).toMatchObject({ granted: {} });
    expect(
      applyLease(
        state,
        request({ caps, leaseId: 's1/4', need: { modelCalls: 1, inputTokens: 1 } }),
        0,
      ),
    ).toMatchObject({ refused: { budget: 'inputTokens' } });
  });

  it('a window no longer shown forgets its leases, and a query changes nothing', () => {
    const state = newSharedBudget('agent:a:1000ms', 1000, 0);
    const lease = (n: number, at: number) =>
      applyLease(
        state,
        request({ window: 1000, caps: { modelCalls: 5 }, leaseId: `s${n}/1`, sessionId: `s${n}` }),
        at,
      );
    lease(1, 0);
    // A query in a much later window rolls a copy only.
    sharedBudgetStatusOf(state, 90_000);
    expect(Object.keys(state.leases)).toEqual(['s1/1']);
    // Four windows later, window 0 is no longer among the three shown: its lease is forgotten.
    lease(2, 2000);
    lease(3, 4000);
    lease(4, 6000);
    expect(Object.keys(state.leases)).toContain('s1/1');
    lease(5, 8000);
    expect(Object.keys(state.leases).sort()).toEqual(['s3/1', 's4/1', 's5/1', 's2/1'].sort());
  });

  it('a held lease fits a need within what is left of it, before its window ends', () => {
    const lease = {
      id: 'x',
      granted: { modelCalls: 2 },
      spent: spent(1),
      windowEnd: 1000,
      returnAtIdle: false,
    };
    expect(leaseFits(lease, { modelCalls: 9 }, { modelCalls: 1 }, 0)).toBe(true);
    expect(leaseFits(lease, { modelCalls: 9 }, { modelCalls: 2 }, 0)).toBe(false);
    expect(leaseFits(lease, { modelCalls: 9 }, { modelCalls: 1 }, 1000)).toBe(false);
    expect(leaseFits(undefined, {}, {}, 0)).toBe(false);
    // A budget the spec does not cap is not checked.
    expect(leaseFits(lease, { totalTokens: 5 }, { modelCalls: 5 }, 0)).toBe(true);
  });
});
