/** The budget clock of the hook test env on the time-skipping server (pure logic, fake timers). */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../../src/testing/virtual-clock.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('VirtualClock', () => {
  it('fires the timers a jump passes, earliest first, and leaves the others', () => {
    const clock = new VirtualClock();
    const fired: string[] = [];
    clock.after(600_000, () => fired.push('budget'));
    clock.after(1_000, () => fired.push('short'));
    clock.after(86_400_000, () => fired.push('day'));
    clock.advance(600_000);
    expect(fired).toEqual(['short', 'budget']);
    expect(clock.skippedMs).toBe(600_000);
  });

  it('runs a partly skipped timer for the rest of its time only', () => {
    const clock = new VirtualClock();
    let fired = false;
    clock.after(1_000, () => (fired = true));
    clock.advance(900);
    vi.advanceTimersByTime(99);
    expect(fired).toBe(false);
    vi.advanceTimersByTime(1);
    expect(fired).toBe(true);
  });

  it("fireNow fires one owner's timers only; cancel stops a timer", () => {
    const clock = new VirtualClock();
    const mine = {};
    const fired: string[] = [];
    clock.after(600_000, () => fired.push('mine'), mine);
    clock.after(60_000, () => fired.push('other'), {});
    const cancel = clock.after(10, () => fired.push('cancelled'));
    cancel();
    expect(clock.fireNow(mine)).toBe(true);
    expect(clock.fireNow(mine)).toBe(false);
    vi.advanceTimersByTime(59_999);
    expect(fired).toEqual(['mine']);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['mine', 'other']);
  });

  it('refuses a negative or endless jump', () => {
    const clock = new VirtualClock();
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(() => clock.advance(Infinity)).toThrow(RangeError);
  });
});
