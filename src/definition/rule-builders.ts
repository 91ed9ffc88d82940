/**
 * The builders of the option field rules (`option-rules.ts`, `subagent-rules.ts`): each
 * makes an optional field's rule that refuses a bad value with a message naming the option
 * and the value given.
 *
 * @module
 */
import { z } from 'zod';
import { ALL_HOOK_EVENTS, isHookEvent } from '../common/hook-events.js';
import { MAX_TIMEOUT_MS } from '../common/defaults.js';

/** An environment variable's name, as `advanced.toolEnv` and `mcpServers.<name>.env` take it. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Reports one problem of a field's value. */
export type Issue = (message: string) => void;

/** An optional field whose value `find` checks, reporting each problem through `issue`. */
export function rule(find: (value: unknown, issue: Issue) => void) {
  return required(find).optional();
}

/** A required field: `find` checks its value, `undefined` included. */
export function required(find: (value: unknown, issue: Issue) => void) {
  return z.unknown().superRefine((value, ctx) => {
    find(value, (message) => ctx.addIssue({ code: 'custom', message }));
  });
}

/** An optional field refused with the message `problemOf` returns, if any. */
export const fromProblem = (problemOf: (value: unknown) => string | undefined) =>
  rule((value, issue) => {
    const problem = problemOf(value);
    if (problem) issue(problem);
  });

// The rule builders: one line a field in the tables.

export const timeoutMs = (name: string) =>
  rule((value, issue) => {
    if (value === undefined) return;
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      value <= 0 ||
      value > MAX_TIMEOUT_MS
    ) {
      issue(
        `${name} must be an integer with 0 < ${name} <= ${MAX_TIMEOUT_MS} (ms), got ${describeValue(value)}`,
      );
    }
  });

export const positiveInt = (name: string) =>
  rule((value, issue) => {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      issue(`${name} must be a positive integer, got ${describeValue(value)}`);
    }
  });

/**
 * An optional option `ok` accepts, else refused with `<name> <requirement>, got <value>`.
 */
export const checked = (name: string, ok: (value: unknown) => boolean, requirement: string) =>
  rule((value, issue) => {
    if (value !== undefined && !ok(value)) {
      issue(`${name} ${requirement}, got ${describeValue(value)}`);
    }
  });

export const optionalString = (name: string) =>
  rule((value, issue) => {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      issue(`${name} must be a non-empty string, got ${describeValue(value)}`);
    }
  });

/** A string option that must match `pattern` (described by `text`). */
export const ruled = (name: string, pattern: RegExp, text: string) =>
  rule((value, issue) => {
    if (value !== undefined && (typeof value !== 'string' || !pattern.test(value))) {
      issue(
        `${name} must be ${text}, got ${typeof value === 'string' && value.length > 60 ? `${value.length} characters` : describeValue(value)}`,
      );
    }
  });

export const hooksSchema = (name: string) =>
  rule((value, issue) => {
    if (value === undefined) return;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      issue(`${name} must be an object of callback arrays by event`);
      return;
    }
    for (const [event, callbacks] of Object.entries(value)) {
      if (!isHookEvent(event)) {
        issue(`${name} has an unknown event '${event}' (events: ${ALL_HOOK_EVENTS.join(', ')})`);
      } else if (!Array.isArray(callbacks) || callbacks.some((c) => typeof c !== 'function')) {
        issue(`${name}.${event} must be an array of functions`);
      }
    }
  });

/** A refused value as a message shows it: numbers and strings as given, else its type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `'${value}'`;
  if (value === null) return 'null';
  return typeof value;
}
