/**
 * The tool events of a send's live stream (`tool-start`, `tool-end`). The tool execution
 * activity publishes them for every tool it runs; the workflow makes them itself for a
 * `Task` call, which starts a sub-agent instead of running an activity. Workflow-safe.
 *
 * @module
 */
import type { JsonObject } from './json.js';

/** A tool starts to execute (after PreToolUse and permission allowed it). */
export interface ToolStartEvent {
  /** Discriminant: `'tool-start'`. */
  type: 'tool-start';
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /** The input it runs with (after hooks and permission edited it). */
  input: JsonObject;
  /**
   * For a `Task` call: the session id of the sub-agent it starts (its workflow id is
   * `session-` and this). Absent on every other tool's events.
   */
  childSessionId?: string;
  /**
   * The sub-agent whose call this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}

/** A tool finished executing (before PostToolUse / PostToolUseFailure). */
export interface ToolEndEvent {
  /** Discriminant: `'tool-end'`. */
  type: 'tool-end';
  /** The tool call's id, as the model gave it. */
  toolUseId: string;
  /** The tool's name. */
  toolName: string;
  /**
   * How the execution ended: `success` (a result), `error` (an error result, or the
   * execution failed), or `cancelled` (its activity was cancelled, as an abort does).
   */
  status: 'success' | 'error' | 'cancelled';
  /** The result's display summary, or its error message. */
  summary?: string;
  /** Wall time of the execution, ms (of a `Task` call: workflow time, from the sub-agent's start). */
  durationMs: number;
  /**
   * For a `Task` call: the session id of the sub-agent it started (its workflow id is
   * `session-` and this). Absent on every other tool's events.
   */
  childSessionId?: string;
  /**
   * The sub-agent whose call this is (`main/researcher`): set on a sub-agent's events only,
   * which its top session's send stream carries besides its own. Absent on the session's
   * own events.
   */
  agentPath?: string;
}
