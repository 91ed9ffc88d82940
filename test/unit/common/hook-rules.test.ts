import { describe, expect, it } from 'vitest';
import { AgentSdkError, HookError } from '../../../src/common/errors.js';
import { HookEvent } from '../../../src/common/hook-events.js';
import {
  applyPermissionRequest,
  applyPostToolUse,
  applyPostToolUseFailure,
  applyPreToolUse,
  applySessionStart,
  applyTaskCompleted,
  applyUserPromptSubmit,
  mergeHookOutputs,
  validateHookOutput,
} from '../../../src/common/hook-rules.js';
import type { JsonObject } from '../../../src/common/json.js';
import type { HookOutput, ImagePart, Prompt, ToolResult } from '../../../src/common/types.js';

/** Runs validateHookOutput on a malformed output and returns the error it threw. */
function rejectionOf(event: HookEvent, index: number, value: unknown): unknown {
  try {
    validateHookOutput(event, index, value);
  } catch (error) {
    return error;
  }
  throw new Error(`validateHookOutput accepted ${String(value)}`);
}

/**
 * Asserts the contract's error for a malformed output (§3): a HookError coded
 * HOOK_OUTPUT_INVALID whose message names the event, the position `#N` and what was wrong.
 */
function expectMalformed(event: HookEvent, index: number, value: unknown, what: RegExp): void {
  const error = rejectionOf(event, index, value);
  expect(error).toBeInstanceOf(HookError);
  const hookError = error as HookError;
  expect(hookError.code).toBe('HOOK_OUTPUT_INVALID');
  expect(hookError.event).toBe(event);
  expect(hookError.callbackIndex).toBe(index);
  expect(hookError.message).toContain(event);
  expect(hookError.message).toContain(`#${index + 1}`);
  expect(hookError.message).toMatch(what);
}

const png: ImagePart = { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png' };
const jpeg: ImagePart = { type: 'image', image: 'https://example.com/cat.jpg' };

describe('validateHookOutput', () => {
  describe('accepts', () => {
    it('a bare continue', () => {
      expect(validateHookOutput(HookEvent.PreToolUse, 0, { action: 'continue' })).toEqual({
        action: 'continue',
      });
    });

    it('each of the three actions', () => {
      for (const action of ['continue', 'skip', 'abort'] as const) {
        expect(validateHookOutput(HookEvent.PreToolUse, 0, { action }).action).toBe(action);
      }
    });

    it('every field of the contract', () => {
      const output = {
        action: 'skip',
        modifiedInput: { path: '/tmp/a', options: { recursive: true }, list: [1, 'two', null] },
        modifiedOutput: { ok: true },
        reason: 'not today',
      };
      expect(validateHookOutput(HookEvent.PreToolUse, 0, output)).toEqual(output);
    });

    it('a null modifiedOutput, keeping it', () => {
      const output = validateHookOutput(HookEvent.PostToolUse, 0, {
        action: 'continue',
        modifiedOutput: null,
      });
      expect(output).toHaveProperty('modifiedOutput', null);
    });

    it.each([
      ['a string', 'redacted'],
      ['the empty string', ''],
      ['a number', 42],
      ['false', false],
      ['an array', [1, { a: 'b' }]],
    ])('%s as modifiedOutput', (_label, modifiedOutput) => {
      expect(
        validateHookOutput(HookEvent.PostToolUse, 0, { action: 'continue', modifiedOutput }),
      ).toEqual({ action: 'continue', modifiedOutput });
    });

    it('an object with a null prototype as the output and as modifiedInput', () => {
      const modifiedInput = Object.assign(Object.create(null) as object, { a: 1 });
      const value = Object.assign(Object.create(null) as object, {
        action: 'continue',
        modifiedInput,
      });
      expect(validateHookOutput(HookEvent.PreToolUse, 0, value)).toEqual({
        action: 'continue',
        modifiedInput: { a: 1 },
      });
    });

    it('the same object reached twice, which is no cycle', () => {
      const shared = { x: 1 };
      const output = validateHookOutput(HookEvent.PreToolUse, 0, {
        action: 'continue',
        modifiedInput: { a: shared, b: shared, c: [shared, shared] },
      });
      expect(output.modifiedInput).toEqual({ a: { x: 1 }, b: { x: 1 }, c: [{ x: 1 }, { x: 1 }] });
    });

    it('fields given as undefined, leaving them out', () => {
      const output = validateHookOutput(HookEvent.PreToolUse, 0, {
        action: 'continue',
        modifiedInput: undefined,
        modifiedOutput: undefined,
        reason: undefined,
      });
      expect(output).toStrictEqual({ action: 'continue' });
    });
  });

  it('keeps only the fields of the contract', () => {
    const output = validateHookOutput(HookEvent.PreToolUse, 0, {
      action: 'continue',
      reason: 'fine',
      decision: 'approve',
      extra: { a: 1 },
    });
    expect(output).toStrictEqual({ action: 'continue', reason: 'fine' });
  });

  describe('rejects', () => {
    it('with a HookError that is an AgentSdkError', () => {
      const error = rejectionOf(HookEvent.PreToolUse, 0, null);
      expect(error).toBeInstanceOf(HookError);
      expect(error).toBeInstanceOf(AgentSdkError);
      expect(error).toBeInstanceOf(Error);
    });

    it('naming the position 1-based, as #N', () => {
      expectMalformed(HookEvent.PreToolUse, 0, 'continue', /#1\b/);
      expectMalformed(HookEvent.PreToolUse, 4, 'continue', /#5\b/);
    });

    it('null', () => {
      expectMalformed(HookEvent.PreToolUse, 0, null, /expected an object.*got null/);
    });

    it('undefined, as from a callback that returns nothing', () => {
      expectMalformed(HookEvent.SessionStart, 1, undefined, /expected an object.*undefined/);
    });

    it('a string', () => {
      expectMalformed(HookEvent.UserPromptSubmit, 0, 'continue', /expected an object.*'continue'/);
    });

    it('a number', () => {
      expectMalformed(HookEvent.TaskCompleted, 2, 1, /expected an object.*number 1/);
    });

    it('an array', () => {
      expectMalformed(
        HookEvent.PostToolUse,
        0,
        [{ action: 'continue' }],
        /expected an object.*an array/,
      );
    });

    it('a class instance as the output', () => {
      class Output {
        action = 'continue';
      }
      expectMalformed(HookEvent.PreToolUse, 0, new Output(), /expected an object.*Output/);
    });

    it('a Promise, as from a callback that returned a promise of a promise', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        Promise.resolve({ action: 'continue' }),
        /expected an object.*Promise/,
      );
    });

    it('an output without action', () => {
      expectMalformed(HookEvent.PermissionRequest, 1, {}, /action must be.*got undefined/);
    });

    it('an unknown action', () => {
      expectMalformed(HookEvent.PreToolUse, 0, { action: 'deny' }, /action must be.*'deny'/);
    });

    it('an action in the wrong case', () => {
      expectMalformed(HookEvent.PreToolUse, 0, { action: 'Continue' }, /action.*'Continue'/);
    });

    it('an action that is not a string', () => {
      expectMalformed(HookEvent.PreToolUse, 0, { action: true }, /action.*boolean true/);
    });

    it('a modifiedInput that is a string', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: 'ls -la' },
        /modifiedInput must be a plain object.*'ls -la'/,
      );
    });

    it('a modifiedInput that is null', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        1,
        { action: 'continue', modifiedInput: null },
        /modifiedInput must be a plain object.*null/,
      );
    });

    it('a modifiedInput that is an array', () => {
      expectMalformed(
        HookEvent.UserPromptSubmit,
        0,
        { action: 'continue', modifiedInput: ['a'] },
        /modifiedInput must be a plain object.*an array/,
      );
    });

    it('a modifiedInput that is a class instance', () => {
      class Edits {
        command = 'ls';
      }
      expectMalformed(
        HookEvent.PermissionRequest,
        2,
        { action: 'continue', modifiedInput: new Edits() },
        /modifiedInput must be a plain object.*Edits/,
      );
    });

    it('a modifiedInput that is a Map', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: new Map([['command', 'ls']]) },
        /modifiedInput must be a plain object.*Map/,
      );
    });

    it('a function inside modifiedInput, naming its path', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        1,
        { action: 'continue', modifiedInput: { onDone: () => undefined } },
        /modifiedInput\.onDone is function/,
      );
    });

    it('a function as modifiedOutput', () => {
      expectMalformed(
        HookEvent.PostToolUse,
        0,
        { action: 'continue', modifiedOutput: () => 'text' },
        /modifiedOutput is function/,
      );
    });

    it('undefined in an array, naming its index', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: { files: ['a', undefined, 'c'] } },
        /modifiedInput\.files\[1\] is undefined/,
      );
    });

    it('undefined in an array given as modifiedOutput', () => {
      expectMalformed(
        HookEvent.PostToolUseFailure,
        0,
        { action: 'continue', modifiedOutput: [undefined] },
        /modifiedOutput\[0\] is undefined/,
      );
    });

    it('NaN', () => {
      expectMalformed(
        HookEvent.PostToolUse,
        3,
        { action: 'continue', modifiedOutput: NaN },
        /modifiedOutput is NaN/,
      );
    });

    it('Infinity nested in modifiedInput', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: { limits: { max: Infinity } } },
        /modifiedInput\.limits\.max is Infinity/,
      );
    });

    it('a bigint', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: { size: 10n } },
        /modifiedInput\.size is bigint/,
      );
    });

    it('a symbol', () => {
      expectMalformed(
        HookEvent.PostToolUse,
        0,
        { action: 'continue', modifiedOutput: Symbol('secret') },
        /modifiedOutput is symbol/,
      );
    });

    it('a class instance nested in modifiedInput', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: { when: new Date(0) } },
        /modifiedInput\.when is a Date object/,
      );
    });

    it('a cycle in modifiedInput', () => {
      const edits: Record<string, unknown> = { command: 'ls' };
      edits.self = edits;
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'continue', modifiedInput: edits },
        /modifiedInput\.self is a cycle/,
      );
    });

    it('a cycle through an array in modifiedOutput', () => {
      const list: unknown[] = [];
      list.push({ list });
      expectMalformed(
        HookEvent.PostToolUse,
        1,
        { action: 'continue', modifiedOutput: list },
        /modifiedOutput\[0\]\.list is a cycle/,
      );
    });

    it('a reason that is not a string', () => {
      expectMalformed(
        HookEvent.PreToolUse,
        0,
        { action: 'abort', reason: { text: 'no' } },
        /reason must be a string/,
      );
    });
  });
});

describe('mergeHookOutputs', () => {
  it('gives continue with no edits for no outputs', () => {
    expect(mergeHookOutputs([])).toStrictEqual({ action: 'continue', hasModifiedOutput: false });
  });

  it('gives continue when every output continues', () => {
    const merged = mergeHookOutputs([{ action: 'continue' }, { action: 'continue' }]);
    expect(merged.action).toBe('continue');
    expect(merged.decidedBy).toBeUndefined();
  });

  it('ignores the reason of a continue', () => {
    expect(mergeHookOutputs([{ action: 'continue', reason: 'fine' }]).reason).toBeUndefined();
  });

  it('lets the first skip decide over a later abort', () => {
    const merged = mergeHookOutputs([
      { action: 'continue' },
      { action: 'skip', reason: 'skip it' },
      { action: 'abort', reason: 'abort it' },
    ]);
    expect(merged.action).toBe('skip');
    expect(merged.decidedBy).toBe(1);
  });

  it('lets the first abort decide over a later skip', () => {
    const merged = mergeHookOutputs([
      { action: 'abort', reason: 'abort it' },
      { action: 'skip', reason: 'skip it' },
    ]);
    expect(merged.action).toBe('abort');
    expect(merged.decidedBy).toBe(0);
  });

  it('does not let a later continue undo a skip', () => {
    const merged = mergeHookOutputs([{ action: 'skip' }, { action: 'continue' }]);
    expect(merged.action).toBe('skip');
  });

  it('gives the position of the deciding callback 0-based', () => {
    const merged = mergeHookOutputs([
      { action: 'continue' },
      { action: 'continue' },
      { action: 'abort' },
    ]);
    expect(merged.decidedBy).toBe(2);
  });

  it('takes the reason of the deciding output', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', reason: 'first' },
      { action: 'skip', reason: 'deciding' },
      { action: 'abort', reason: 'later' },
    ]);
    expect(merged.reason).toBe('deciding');
  });

  it("takes no later output's reason when the deciding one gave none", () => {
    const merged = mergeHookOutputs([{ action: 'skip' }, { action: 'abort', reason: 'later' }]);
    expect(merged.reason).toBeUndefined();
  });

  it('shallow-merges modifiedInput in order, later keys winning', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { a: 1, b: 1 } },
      { action: 'continue', modifiedInput: { b: 2, c: 2 } },
    ]);
    expect(merged.modifiedInput).toEqual({ a: 1, b: 2, c: 2 });
  });

  it('replaces a nested object rather than merging it deeply', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { options: { a: 1, b: 1 } } },
      { action: 'continue', modifiedInput: { options: { b: 2 } } },
    ]);
    expect(merged.modifiedInput).toEqual({ options: { b: 2 } });
  });

  it('leaves earlier edits alone when a callback returns no modifiedInput', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { command: 'ls -la' } },
      { action: 'continue' },
      { action: 'continue', modifiedOutput: 'x' },
    ]);
    expect(merged.modifiedInput).toEqual({ command: 'ls -la' });
  });

  it('gives no modifiedInput when no callback gave one', () => {
    const merged = mergeHookOutputs([{ action: 'continue' }, { action: 'skip' }]);
    expect(merged.modifiedInput).toBeUndefined();
  });

  it('merges the edits of every output, deciding or not, into modifiedInput', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { a: 1 } },
      { action: 'skip', modifiedInput: { b: 1 } },
      { action: 'abort', modifiedInput: { c: 1 } },
    ]);
    expect(merged.modifiedInput).toEqual({ a: 1, b: 1, c: 1 });
  });

  it("leaves the deciding output's own edits out of modifiedInputBeforeDecision", () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { a: 1, shared: 'first' } },
      { action: 'skip', modifiedInput: { b: 1, shared: 'deciding' } },
      { action: 'continue', modifiedInput: { c: 1 } },
    ]);
    expect(merged.modifiedInputBeforeDecision).toEqual({ a: 1, shared: 'first', c: 1 });
  });

  it('gives modifiedInputBeforeDecision equal to modifiedInput when no output decides', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { a: 1 } },
      { action: 'continue', modifiedInput: { b: 2 } },
    ]);
    expect(merged.modifiedInputBeforeDecision).toEqual(merged.modifiedInput);
  });

  it('does not mutate the outputs it merges', () => {
    const outputs: HookOutput[] = [
      { action: 'continue', modifiedInput: { a: 1 } },
      { action: 'continue', modifiedInput: { b: 2 } },
    ];
    const copy = structuredClone(outputs);
    mergeHookOutputs(outputs);
    expect(outputs).toEqual(copy);
  });

  it('takes the last modifiedOutput given', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedOutput: 'first' },
      { action: 'continue', modifiedOutput: 'second' },
    ]);
    expect(merged.modifiedOutput).toBe('second');
    expect(merged.hasModifiedOutput).toBe(true);
  });

  it('takes a null modifiedOutput given last', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedOutput: 'first' },
      { action: 'continue', modifiedOutput: null },
    ]);
    expect(merged.modifiedOutput).toBeNull();
    expect(merged.hasModifiedOutput).toBe(true);
  });

  it('keeps an earlier modifiedOutput when later callbacks give none', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedOutput: { ok: true } },
      { action: 'continue' },
    ]);
    expect(merged.modifiedOutput).toEqual({ ok: true });
    expect(merged.hasModifiedOutput).toBe(true);
  });

  it('takes a modifiedOutput given after the deciding output', () => {
    const merged = mergeHookOutputs([
      { action: 'abort', modifiedOutput: 'deciding' },
      { action: 'continue', modifiedOutput: 'later' },
    ]);
    expect(merged.modifiedOutput).toBe('later');
  });

  it('says no modifiedOutput was given when none was', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedInput: { a: 1 } }]);
    expect(merged.hasModifiedOutput).toBe(false);
    expect(merged.modifiedOutput).toBeUndefined();
  });

  describe('with the seed page hookA, hookB, hookC', () => {
    // hookA skips, hookB aborts with edits, hookC continues with edits.
    const hookA: HookOutput = { action: 'skip', reason: 'A skips' };
    const hookB: HookOutput = {
      action: 'abort',
      reason: 'B aborts',
      modifiedInput: { command: 'B', fromB: true },
    };
    const hookC: HookOutput = {
      action: 'continue',
      modifiedInput: { command: 'C', fromC: true },
    };
    const merged = mergeHookOutputs([hookA, hookB, hookC]);

    it('decides skip, by hookA at position 0', () => {
      expect(merged.action).toBe('skip');
      expect(merged.decidedBy).toBe(0);
    });

    it("takes hookA's reason", () => {
      expect(merged.reason).toBe('A skips');
    });

    it("merges hookB's and hookC's edits in order", () => {
      expect(merged.modifiedInput).toEqual({ command: 'C', fromB: true, fromC: true });
    });

    it('keeps the edits of the outputs after the deciding one', () => {
      expect(merged.modifiedInputBeforeDecision).toEqual({
        command: 'C',
        fromB: true,
        fromC: true,
      });
    });

    it('gives a skipped tool call a success result with the reason of hookA', () => {
      const decision = applyPreToolUse('Bash', { command: 'rm -rf /' }, merged);
      expect(decision.kind).toBe('skip');
      if (decision.kind === 'run') throw new Error('expected the tool not to run');
      expect(decision.result.status).toBe('success');
      expect(decision.result.model).toBe('A skips');
    });
  });

  describe('for SessionEnd', () => {
    it('merges validated SessionEnd outputs like any other event', () => {
      const outputs = [
        { action: 'continue', modifiedInput: { note: 'a' } },
        { action: 'abort', reason: 'too late' },
        { action: 'skip', modifiedOutput: null },
      ].map((value, index) => validateHookOutput(HookEvent.SessionEnd, index, value));
      expect(mergeHookOutputs(outputs)).toEqual({
        action: 'abort',
        decidedBy: 1,
        reason: 'too late',
        modifiedInput: { note: 'a' },
        modifiedInputBeforeDecision: { note: 'a' },
        hasModifiedOutput: true,
        modifiedOutput: null,
      });
    });

    it('names SessionEnd in the error for a malformed SessionEnd output', () => {
      expectMalformed(HookEvent.SessionEnd, 0, { action: 'stop' }, /action must be/);
    });
  });
});

describe('applyUserPromptSubmit', () => {
  it('rejects the prompt on abort, with the reason and the deciding position', () => {
    const merged = mergeHookOutputs([
      { action: 'continue' },
      { action: 'abort', reason: 'contains secrets' },
    ]);
    expect(applyUserPromptSubmit('my password is hunter2', merged)).toEqual({
      kind: 'reject',
      reason: 'contains secrets',
      decidedBy: 1,
    });
  });

  it('rejects the prompt on abort with a default reason when none was given', () => {
    const decision = applyUserPromptSubmit('hi', mergeHookOutputs([{ action: 'abort' }]));
    expect(decision.kind).toBe('reject');
    if (decision.kind !== 'reject') return;
    expect(decision.reason).toMatch(/UserPromptSubmit/);
  });

  it('rejects the prompt on abort even when edits were given', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { userPrompt: 'edited' } },
      { action: 'abort', reason: 'no' },
    ]);
    expect(applyUserPromptSubmit('hi', merged).kind).toBe('reject');
  });

  it('ignores skip, accepting the prompt unchanged', () => {
    const prompt: Prompt = [{ type: 'text', text: 'hi' }, png];
    const merged = mergeHookOutputs([{ action: 'skip', reason: 'skip it' }]);
    expect(applyUserPromptSubmit(prompt, merged)).toEqual({ kind: 'accept', prompt });
  });

  it('still applies the userPrompt edit of a skip output, since skip is ignored', () => {
    const merged = mergeHookOutputs([{ action: 'skip', modifiedInput: { userPrompt: 'edited' } }]);
    expect(applyUserPromptSubmit('hi', merged)).toEqual({ kind: 'accept', prompt: 'edited' });
  });

  it('accepts the prompt unchanged when no callback edits it', () => {
    const merged = mergeHookOutputs([{ action: 'continue' }]);
    expect(applyUserPromptSubmit('hi', merged)).toEqual({ kind: 'accept', prompt: 'hi' });
  });

  it('replaces a text prompt with modifiedInput.userPrompt', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { userPrompt: '[tenant:acme]\nhi' } },
    ]);
    expect(applyUserPromptSubmit('hi', merged)).toEqual({
      kind: 'accept',
      prompt: '[tenant:acme]\nhi',
    });
  });

  it('takes the userPrompt of the last callback that set it', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { userPrompt: 'first' } },
      { action: 'continue', modifiedInput: { userPrompt: 'second' } },
      { action: 'continue' },
    ]);
    expect(applyUserPromptSubmit('hi', merged)).toEqual({ kind: 'accept', prompt: 'second' });
  });

  it('replaces the text parts and keeps every image, in order', () => {
    const prompt: Prompt = [{ type: 'text', text: 'what is this?' }, png, jpeg];
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { userPrompt: 'describe both images' } },
    ]);
    const decision = applyUserPromptSubmit(prompt, merged);
    expect(decision.kind).toBe('accept');
    if (decision.kind !== 'accept' || typeof decision.prompt === 'string') {
      throw new Error('expected an accepted prompt of parts');
    }
    expect(decision.prompt.filter((p) => p.type === 'image')).toEqual([png, jpeg]);
    expect(decision.prompt.filter((p) => p.type === 'text')).toEqual([
      { type: 'text', text: 'describe both images' },
    ]);
  });

  it('replaces several text parts with the one text given', () => {
    const prompt: Prompt = [{ type: 'text', text: 'first' }, png, { type: 'text', text: 'second' }];
    const merged = mergeHookOutputs([{ action: 'continue', modifiedInput: { userPrompt: 'one' } }]);
    const decision = applyUserPromptSubmit(prompt, merged);
    if (decision.kind !== 'accept' || typeof decision.prompt === 'string') {
      throw new Error('expected an accepted prompt of parts');
    }
    expect(decision.prompt).toHaveLength(2);
    expect(decision.prompt).toContainEqual({ type: 'text', text: 'one' });
    expect(decision.prompt).toContainEqual(png);
  });

  it("drops the text and keeps every image on userPrompt ''", () => {
    const prompt: Prompt = [{ type: 'text', text: 'ignore this' }, png, jpeg];
    const merged = mergeHookOutputs([{ action: 'continue', modifiedInput: { userPrompt: '' } }]);
    expect(applyUserPromptSubmit(prompt, merged)).toEqual({ kind: 'accept', prompt: [png, jpeg] });
  });

  it("empties a text prompt on userPrompt ''", () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedInput: { userPrompt: '' } }]);
    expect(applyUserPromptSubmit('hi', merged)).toEqual({ kind: 'accept', prompt: '' });
  });

  it('adds the text to a prompt of images only', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { userPrompt: 'caption this' } },
    ]);
    const decision = applyUserPromptSubmit([png], merged);
    if (decision.kind !== 'accept' || typeof decision.prompt === 'string') {
      throw new Error('expected an accepted prompt of parts');
    }
    expect(decision.prompt).toContainEqual({ type: 'text', text: 'caption this' });
    expect(decision.prompt).toContainEqual(png);
    expect(decision.prompt).toHaveLength(2);
  });

  it('does not mutate the original prompt', () => {
    const prompt: Prompt = [{ type: 'text', text: 'hi' }, png];
    const copy = structuredClone(prompt);
    applyUserPromptSubmit(
      prompt,
      mergeHookOutputs([{ action: 'continue', modifiedInput: { userPrompt: '' } }]),
    );
    expect(prompt).toEqual(copy);
  });

  it('ignores a userPrompt that is not a string', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedInput: { userPrompt: 42 } }]);
    expect(applyUserPromptSubmit('hi', merged)).toEqual({ kind: 'accept', prompt: 'hi' });
  });

  it('ignores edits of fields other than userPrompt', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedInput: { imageCount: 0 } }]);
    const prompt: Prompt = [{ type: 'text', text: 'hi' }, png];
    expect(applyUserPromptSubmit(prompt, merged)).toEqual({ kind: 'accept', prompt });
  });
});

describe('applyPreToolUse', () => {
  const input: JsonObject = { command: 'ls', cwd: '/tmp' };

  it('runs the tool with its input when every callback continues without edits', () => {
    const merged = mergeHookOutputs([{ action: 'continue' }]);
    expect(applyPreToolUse('Bash', input, merged)).toEqual({ kind: 'run', toolInput: input });
  });

  it('runs the tool with the edits shallow-merged into its input', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { command: 'ls -la' } },
      { action: 'continue', modifiedInput: { timeoutMs: 1000 } },
    ]);
    expect(applyPreToolUse('Bash', input, merged)).toEqual({
      kind: 'run',
      toolInput: { command: 'ls -la', cwd: '/tmp', timeoutMs: 1000 },
    });
  });

  it('does not mutate the original tool input', () => {
    const original: JsonObject = { command: 'ls' };
    applyPreToolUse(
      'Bash',
      original,
      mergeHookOutputs([{ action: 'continue', modifiedInput: { command: 'pwd' } }]),
    );
    expect(original).toEqual({ command: 'ls' });
  });

  it("gives skip a success result whose model is the hook's reason", () => {
    const merged = mergeHookOutputs([{ action: 'skip', reason: 'already done' }]);
    const decision = applyPreToolUse('Bash', input, merged);
    expect(decision).toMatchObject({
      kind: 'skip',
      reason: 'already done',
      result: { status: 'success', model: 'already done' },
    });
  });

  it('gives skip without a reason a default model naming the tool', () => {
    const decision = applyPreToolUse('Write', input, mergeHookOutputs([{ action: 'skip' }]));
    if (decision.kind === 'run') throw new Error('expected the tool not to run');
    expect(decision.result.status).toBe('success');
    expect(decision.result.model).toContain('Write');
    expect(decision.reason).toBe(decision.result.model);
  });

  it("gives abort an error result carrying the hook's reason", () => {
    const merged = mergeHookOutputs([{ action: 'abort', reason: '危险命令被阻止: rm -rf /' }]);
    const decision = applyPreToolUse('Bash', { command: 'rm -rf /' }, merged);
    expect(decision.kind).toBe('abort');
    if (decision.kind === 'run') throw new Error('expected the tool not to run');
    expect(decision.reason).toBe('危险命令被阻止: rm -rf /');
    expect(decision.result.status).toBe('error');
    expect(decision.result.model).toBe('危险命令被阻止: rm -rf /');
    if (decision.result.status !== 'error') return;
    expect(decision.result.error.message).toBe('危险命令被阻止: rm -rf /');
  });

  it('gives abort without a reason an error result naming the tool', () => {
    const decision = applyPreToolUse('Bash', input, mergeHookOutputs([{ action: 'abort' }]));
    if (decision.kind === 'run') throw new Error('expected the tool not to run');
    expect(decision.result.status).toBe('error');
    expect(decision.result.model).toContain('Bash');
  });

  it('does not run the tool on skip even when edits were given', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { command: 'pwd' } },
      { action: 'skip', reason: 'no' },
    ]);
    expect(applyPreToolUse('Bash', input, merged).kind).toBe('skip');
  });

  it('takes the first decision: skip before abort gives a success result', () => {
    const merged = mergeHookOutputs([
      { action: 'skip', reason: 'skipped' },
      { action: 'abort', reason: 'aborted' },
    ]);
    const decision = applyPreToolUse('Bash', input, merged);
    if (decision.kind === 'run') throw new Error('expected the tool not to run');
    expect(decision.kind).toBe('skip');
    expect(decision.result.status).toBe('success');
    expect(decision.result.model).toBe('skipped');
  });

  it('takes the first decision: abort before skip gives an error result', () => {
    const merged = mergeHookOutputs([
      { action: 'abort', reason: 'aborted' },
      { action: 'skip', reason: 'skipped' },
    ]);
    const decision = applyPreToolUse('Bash', input, merged);
    if (decision.kind === 'run') throw new Error('expected the tool not to run');
    expect(decision.kind).toBe('abort');
    expect(decision.result.status).toBe('error');
    expect(decision.result.model).toBe('aborted');
  });
});

describe('applyPermissionRequest', () => {
  const input: JsonObject = { path: '/work/a.txt', content: 'x' };

  it('lets the request go on with its input when every callback continues', () => {
    const merged = mergeHookOutputs([{ action: 'continue' }]);
    expect(applyPermissionRequest('Write', input, merged)).toEqual({
      kind: 'continue',
      toolInput: input,
    });
  });

  it('lets the request go on with the edits merged into its input', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { path: '/work/b.txt' } },
    ]);
    expect(applyPermissionRequest('Write', input, merged)).toEqual({
      kind: 'continue',
      toolInput: { path: '/work/b.txt', content: 'x' },
    });
  });

  it('denies without interrupt on skip, with the reason', () => {
    const merged = mergeHookOutputs([{ action: 'skip', reason: 'not this file' }]);
    expect(applyPermissionRequest('Write', input, merged)).toMatchObject({
      kind: 'deny',
      message: 'not this file',
      interrupt: false,
    });
  });

  it('denies with interrupt on abort, with the reason', () => {
    const merged = mergeHookOutputs([{ action: 'abort', reason: 'stop everything' }]);
    expect(applyPermissionRequest('Write', input, merged)).toMatchObject({
      kind: 'deny',
      message: 'stop everything',
      interrupt: true,
    });
  });

  it('denies with a default message naming the tool when no reason was given', () => {
    const decision = applyPermissionRequest('Write', input, mergeHookOutputs([{ action: 'skip' }]));
    if (decision.kind !== 'deny') throw new Error('expected a deny');
    expect(decision.message).toContain('Write');
  });

  it("merges every edit first, the deciding output's own included, then reads the action", () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { content: 'y' } },
      { action: 'abort', reason: 'no', modifiedInput: { path: '/work/c.txt' } },
    ]);
    expect(applyPermissionRequest('Write', input, merged)).toEqual({
      kind: 'deny',
      message: 'no',
      interrupt: true,
      toolInput: { path: '/work/c.txt', content: 'y' },
    });
  });

  it('takes the first decision: skip before abort denies without interrupt', () => {
    const merged = mergeHookOutputs([{ action: 'skip' }, { action: 'abort' }]);
    const decision = applyPermissionRequest('Write', input, merged);
    if (decision.kind !== 'deny') throw new Error('expected a deny');
    expect(decision.interrupt).toBe(false);
  });

  it('does not mutate the original tool input', () => {
    const original: JsonObject = { path: '/a' };
    applyPermissionRequest(
      'Write',
      original,
      mergeHookOutputs([{ action: 'continue', modifiedInput: { path: '/b' } }]),
    );
    expect(original).toEqual({ path: '/a' });
  });
});

describe('applyPostToolUse', () => {
  const result: ToolResult = {
    status: 'success',
    model: 'SECRET_KEY=abc123\nother=1',
    display: { summary: 'Read .env', detail: 'SECRET_KEY=abc123' },
    data: { bytes: 26 },
    metadata: { durationMs: 3 },
  };

  it('leaves the result as it was when no callback gives modifiedOutput', () => {
    expect(applyPostToolUse(result, mergeHookOutputs([{ action: 'continue' }]))).toEqual(result);
  });

  it('replaces model with a string modifiedOutput as is', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedOutput: 'SECRET_KEY=***\nother=1' },
    ]);
    expect(applyPostToolUse(result, merged).model).toBe('SECRET_KEY=***\nother=1');
  });

  it('does not quote a string modifiedOutput that looks like JSON', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: '{"ok":true}' }]);
    expect(applyPostToolUse(result, merged).model).toBe('{"ok":true}');
  });

  it("replaces model with '' for an empty string modifiedOutput", () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: '' }]);
    expect(applyPostToolUse(result, merged).model).toBe('');
  });

  it('replaces model with the JSON of an object modifiedOutput', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: { ok: true } }]);
    expect(applyPostToolUse(result, merged).model).toBe('{"ok":true}');
  });

  it("replaces model with 'null' for a null modifiedOutput", () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: null }]);
    expect(applyPostToolUse(result, merged).model).toBe('null');
  });

  it('replaces model with the JSON of a number, a boolean and an array', () => {
    const modelFor = (modifiedOutput: HookOutput['modifiedOutput']): string =>
      applyPostToolUse(result, mergeHookOutputs([{ action: 'continue', modifiedOutput }])).model;
    expect(modelFor(42)).toBe('42');
    expect(modelFor(false)).toBe('false');
    expect(modelFor([1, 'a'])).toBe('[1,"a"]');
  });

  it('uses the last modifiedOutput given, null included', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedOutput: 'first' },
      { action: 'continue', modifiedOutput: null },
      { action: 'continue' },
    ]);
    expect(applyPostToolUse(result, merged).model).toBe('null');
  });

  it('never touches display', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: 'redacted' }]);
    expect(applyPostToolUse(result, merged).display).toEqual({
      summary: 'Read .env',
      detail: 'SECRET_KEY=abc123',
    });
  });

  it('keeps status, data and metadata when replacing model', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: 'redacted' }]);
    expect(applyPostToolUse(result, merged)).toEqual({ ...result, model: 'redacted' });
  });

  it('ignores skip', () => {
    expect(applyPostToolUse(result, mergeHookOutputs([{ action: 'skip' }]))).toEqual(result);
  });

  it('turns the result into an error on abort, with the reason', () => {
    const merged = mergeHookOutputs([{ action: 'abort', reason: 'leaks a secret' }]);
    const out = applyPostToolUse(result, merged);
    expect(out.status).toBe('error');
    expect(out.model).toBe('leaks a secret');
    if (out.status !== 'error') return;
    expect(out.error.message).toBe('leaks a secret');
  });

  it('turns the result into an error on abort without a reason', () => {
    const out = applyPostToolUse(result, mergeHookOutputs([{ action: 'abort' }]));
    expect(out.status).toBe('error');
    if (out.status !== 'error') return;
    expect(out.error.message).not.toBe('');
  });

  it('keeps display on abort', () => {
    const out = applyPostToolUse(result, mergeHookOutputs([{ action: 'abort', reason: 'no' }]));
    expect(out.display).toEqual(result.display);
  });

  it('uses modifiedOutput as the model of an aborted result', () => {
    const merged = mergeHookOutputs([
      { action: 'abort', reason: 'no' },
      { action: 'continue', modifiedOutput: { blocked: true } },
    ]);
    const out = applyPostToolUse(result, merged);
    expect(out.status).toBe('error');
    expect(out.model).toBe('{"blocked":true}');
  });

  it('does not mutate the original result', () => {
    const original = structuredClone(result);
    applyPostToolUse(result, mergeHookOutputs([{ action: 'abort', modifiedOutput: 'x' }]));
    expect(result).toEqual(original);
  });
});

describe('applyPostToolUseFailure', () => {
  const failed: ToolResult = {
    status: 'error',
    model: 'ENOENT: no such file /work/missing.txt',
    display: { summary: 'Read failed' },
    error: { message: 'ENOENT', type: 'FileNotFound', code: 'ENOENT' },
  };

  it('leaves the result as it was when no callback gives modifiedOutput', () => {
    expect(applyPostToolUseFailure(failed, mergeHookOutputs([{ action: 'continue' }]))).toEqual(
      failed,
    );
  });

  it('keeps it an error on abort', () => {
    const out = applyPostToolUseFailure(failed, mergeHookOutputs([{ action: 'abort' }]));
    expect(out).toEqual(failed);
  });

  it('keeps it an error on skip', () => {
    const out = applyPostToolUseFailure(failed, mergeHookOutputs([{ action: 'skip' }]));
    expect(out).toEqual(failed);
  });

  it('replaces model with a string modifiedOutput as is', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: 'file not found' }]);
    expect(applyPostToolUseFailure(failed, merged).model).toBe('file not found');
  });

  it('replaces model with the JSON of an object modifiedOutput', () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: { ok: false } }]);
    expect(applyPostToolUseFailure(failed, merged).model).toBe('{"ok":false}');
  });

  it("replaces model with 'null' for a null modifiedOutput", () => {
    const merged = mergeHookOutputs([{ action: 'continue', modifiedOutput: null }]);
    expect(applyPostToolUseFailure(failed, merged).model).toBe('null');
  });

  it('keeps status, error and display when replacing model', () => {
    const merged = mergeHookOutputs([{ action: 'abort', modifiedOutput: 'hidden' }]);
    expect(applyPostToolUseFailure(failed, merged)).toEqual({ ...failed, model: 'hidden' });
  });
});

describe('applyTaskCompleted', () => {
  it('is ok when every callback continues', () => {
    expect(applyTaskCompleted(mergeHookOutputs([{ action: 'continue' }]))).toEqual({
      kind: 'ok',
    });
  });

  it('ignores skip', () => {
    expect(applyTaskCompleted(mergeHookOutputs([{ action: 'skip', reason: 'x' }]))).toEqual({
      kind: 'ok',
    });
  });

  it('ignores modifications', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { success: false }, modifiedOutput: 'x' },
    ]);
    expect(applyTaskCompleted(merged)).toEqual({ kind: 'ok' });
  });

  it('fails the request on abort, with the reason', () => {
    const merged = mergeHookOutputs([
      { action: 'continue' },
      { action: 'abort', reason: 'summary incomplete' },
    ]);
    expect(applyTaskCompleted(merged)).toEqual({ kind: 'fail', reason: 'summary incomplete' });
  });

  it('fails the request on abort with a default reason when none was given', () => {
    const decision = applyTaskCompleted(mergeHookOutputs([{ action: 'abort' }]));
    expect(decision.kind).toBe('fail');
    if (decision.kind !== 'fail') return;
    expect(decision.reason).toMatch(/TaskCompleted/);
  });
});

describe('applySessionStart', () => {
  it('is ok when every callback continues', () => {
    expect(applySessionStart(mergeHookOutputs([{ action: 'continue' }]))).toEqual({ kind: 'ok' });
  });

  it('is ok when no callback ran', () => {
    expect(applySessionStart(mergeHookOutputs([]))).toEqual({ kind: 'ok' });
  });

  it('ignores skip', () => {
    expect(applySessionStart(mergeHookOutputs([{ action: 'skip' }]))).toEqual({ kind: 'ok' });
  });

  it('ignores modifications', () => {
    const merged = mergeHookOutputs([
      { action: 'continue', modifiedInput: { isResume: true }, modifiedOutput: null },
    ]);
    expect(applySessionStart(merged)).toEqual({ kind: 'ok' });
  });

  it('fails session creation on abort, with the reason', () => {
    const merged = mergeHookOutputs([{ action: 'abort', reason: 'no licence' }]);
    expect(applySessionStart(merged)).toEqual({ kind: 'fail', reason: 'no licence' });
  });

  it('fails session creation on abort with a default reason when none was given', () => {
    const decision = applySessionStart(mergeHookOutputs([{ action: 'abort' }]));
    expect(decision.kind).toBe('fail');
    if (decision.kind !== 'fail') return;
    expect(decision.reason).toMatch(/SessionStart/);
  });
});
