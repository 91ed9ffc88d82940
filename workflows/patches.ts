/**
 * Every `patched()` and `deprecatePatch()` the session workflow calls, one row each. The
 * table is the record of which histories the workflow code still has to replay differently,
 * since when, and which fixture proves it; `test/unit/workflows/patches.test.ts` holds it
 * against every call in `workflows/` (an id called and not listed, or listed and not called,
 * fails). CONTRIBUTING.md ("Changing workflow code") says when a change needs a patch and how
 * a patch goes from `patched` to `deprecatePatch` to removed.
 *
 * Empty at 0.1: the fourteen patches of the work before the first release were removed with
 * their old paths, and the histories in `test/fixtures/histories/`, recorded by 0.1, are the
 * baseline every later release replays; 0.2 adds one, its performance patch. Workflow code
 * (imported by nothing at run time; the ids in the calls are string literals, so the test can
 * read them).
 *
 * @module
 */

/** One patch of the session workflow. */
export interface WorkflowPatch {
  /** The id passed to `patched(id)` or `deprecatePatch(id)`, kebab-case, never reused. */
  readonly id: string;
  /** The release whose code first calls it (`0.2.0`). */
  readonly since: string;
  /**
   * `patched`: both paths live, histories from before `since` take the old one.
   * `deprecated`: `deprecatePatch(id)` and the new path only, once no session from before
   * `since` can still run (see CONTRIBUTING.md).
   */
  readonly stage: 'patched' | 'deprecated';
  /** What changed in the commands the workflow makes, and why old histories need the old path. */
  readonly why: string;
  /**
   * The fixture in `test/fixtures/histories/` the patch is held by: at `patched`, one recorded
   * by the code before `since`, whose replay takes the old path (and fails with the patch
   * removed); at `deprecated`, one recorded by `since`'s code, carrying the marker.
   */
  readonly fixture: string;
}

/** The patches of the session workflow since 0.1 (the baseline). */
export const WORKFLOW_PATCHES: readonly WorkflowPatch[] = [
  {
    id: 'hot-path-0.2.0',
    since: '0.2.0',
    stage: 'patched',
    why:
      "0.2's performance patch (one a release, CONTRIBUTING.md): a tool call's stages with " +
      'nothing to do (no callbacks for PreToolUse, PermissionRequest, PostToolUse or ' +
      "PostToolUseFailure; an MCP or Task call's description; a permission rule's or preset's " +
      'decision) end without an `await`. The commands are the same, but a call resumes in ' +
      'fewer microtask ticks, which can reorder its commands against another coroutine of the ' +
      'same activation (parallel calls, an abort, an Update): histories from before take ' +
      "every stage's `await`. Decided at the start of each run.",
    fixture: 'mcp-session-run1.json',
  },
];
