import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ALL_HOOK_EVENTS,
  HookEvent,
  SessionHookEvent,
  isHookEvent,
} from '../../../src/common/hook-events.js';

const THE_EIGHT_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
  'TaskCompleted',
  'SessionEnd',
];

describe('HookEvent', () => {
  it('holds exactly the eight events of the contract', () => {
    expect(new Set(Object.values(HookEvent))).toEqual(new Set(THE_EIGHT_EVENTS));
    expect(Object.values(HookEvent)).toHaveLength(8);
  });

  it('names each member by its own value', () => {
    for (const [key, value] of Object.entries(HookEvent)) {
      expect(value).toBe(key);
    }
  });
});

describe('SessionHookEvent', () => {
  it('holds exactly the eight events of the contract', () => {
    expect(new Set(Object.values(SessionHookEvent))).toEqual(new Set(THE_EIGHT_EVENTS));
    expect(Object.values(SessionHookEvent)).toHaveLength(8);
  });

  it('has the same members as HookEvent', () => {
    expect(SessionHookEvent).toEqual(HookEvent);
  });

  it('is the same type as HookEvent', () => {
    expectTypeOf<SessionHookEvent>().toEqualTypeOf<HookEvent>();
  });
});

describe('ALL_HOOK_EVENTS', () => {
  it('lists the eight events in lifecycle order', () => {
    expect(ALL_HOOK_EVENTS).toEqual(THE_EIGHT_EVENTS);
  });
});

describe('isHookEvent', () => {
  it.each(THE_EIGHT_EVENTS)('accepts %s', (event) => {
    expect(isHookEvent(event)).toBe(true);
  });

  it.each([
    ['a wrongly cased name', 'preToolUse'],
    ['an event the contract does not have', 'Stop'],
    ['the empty string', ''],
    ['undefined', undefined],
    ['null', null],
    ['a number', 3],
    ['an object', { event: 'PreToolUse' }],
    ['a String object', new String('PreToolUse')],
  ])('rejects %s', (_label, value) => {
    expect(isHookEvent(value)).toBe(false);
  });

  it('narrows unknown to HookEvent', () => {
    const value: unknown = 'SessionEnd';
    if (!isHookEvent(value)) throw new Error('expected a hook event');
    expectTypeOf(value).toEqualTypeOf<HookEvent>();
    expect(value).toBe(HookEvent.SessionEnd);
  });
});
