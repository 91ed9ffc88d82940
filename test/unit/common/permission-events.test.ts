/**
 * The `permission-decided` event of each kind of decision (pure): who decided, the
 * behaviour, the message, whether the input was edited, and nothing that does not apply.
 */
import { describe, expect, it } from 'vitest';
import { permissionDecidedEvent } from '../../../src/common/permission-events.js';

const call = { toolUseId: 'call_1', toolName: 'Write' };

describe('permissionDecidedEvent', () => {
  it('a preset allow names the preset and no message', () => {
    expect(
      permissionDecidedEvent(
        call,
        { behavior: 'allow' },
        { decidedBy: 'preset', preset: 'default' },
      ),
    ).toEqual({
      type: 'permission-decided',
      toolUseId: 'call_1',
      toolName: 'Write',
      behavior: 'allow',
      decidedBy: 'preset',
      preset: 'default',
      editedInput: false,
    });
  });

  it("a preset's ask carries no message when the preset gives none", () => {
    expect(
      permissionDecidedEvent(
        call,
        { behavior: 'ask' },
        { decidedBy: 'preset', preset: 'accept-edits' },
      ),
    ).toMatchObject({ behavior: 'ask', decidedBy: 'preset', preset: 'accept-edits' });
  });

  it('a function deny with interrupt keeps its message and says interrupt', () => {
    expect(
      permissionDecidedEvent(
        call,
        { behavior: 'deny', message: 'no writes', interrupt: true },
        { decidedBy: 'function' },
      ),
    ).toEqual({
      type: 'permission-decided',
      toolUseId: 'call_1',
      toolName: 'Write',
      behavior: 'deny',
      decidedBy: 'function',
      message: 'no writes',
      editedInput: false,
      interrupt: true,
    });
  });

  it("a person's allow with an edited input names the person, the request and editedInput", () => {
    expect(
      permissionDecidedEvent(
        call,
        { behavior: 'allow', updatedInput: { file_path: 'a.txt', content: 'edited' } },
        { decidedBy: 'person', permissionRequestId: 'req-1', identity: 'alice@ops' },
      ),
    ).toEqual({
      type: 'permission-decided',
      toolUseId: 'call_1',
      toolName: 'Write',
      behavior: 'allow',
      decidedBy: 'person',
      identity: 'alice@ops',
      permissionRequestId: 'req-1',
      editedInput: true,
    });
  });

  it('a person whose client gave no identity: the field is left out, not empty', () => {
    const event = permissionDecidedEvent(
      call,
      { behavior: 'deny' },
      { decidedBy: 'person', permissionRequestId: 'req-2', identity: undefined },
    );
    expect(event).not.toHaveProperty('identity');
    expect(event).not.toHaveProperty('message');
    expect(event).toMatchObject({ behavior: 'deny', decidedBy: 'person', editedInput: false });
  });

  it("the deadline's deny names the request and the message", () => {
    expect(
      permissionDecidedEvent(
        call,
        { behavior: 'deny', message: 'No decision on Write within 5 ms: denied' },
        { decidedBy: 'deadline', permissionRequestId: 'req-3' },
      ),
    ).toEqual({
      type: 'permission-decided',
      toolUseId: 'call_1',
      toolName: 'Write',
      behavior: 'deny',
      decidedBy: 'deadline',
      permissionRequestId: 'req-3',
      message: 'No decision on Write within 5 ms: denied',
      editedInput: false,
    });
  });
});
