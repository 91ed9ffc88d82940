/**
 * The field rules of `advanced.subagents`: the shape of each field, one rule a field, as in
 * `option-rules.ts`. What needs the rest of the definition (a sub-agent's tools against the
 * agent's, names in `subagents`, `maxDepth`) is checked by `resolveSubagents`
 * (`subagents.ts`).
 *
 * @module
 */
import { z } from 'zod';
import { PERMISSION_PRESETS } from '../common/permission.js';
import { isAgentModel } from '../models/model.js';
import {
  describeValue,
  hooksSchema,
  positiveInt,
  required,
  rule,
  timeoutMs,
  type Issue,
} from './rule-builders.js';

/** Sub-agent names: 1 to 64 letters, digits, `_` or `-`; `main` is the top session's path. */
const SUBAGENT_NAME_RULE = /^[A-Za-z0-9_-]{1,64}$/;

/** The rule of {@link SUBAGENT_NAME_RULE}, in words, for error messages. */
const SUBAGENT_NAME_RULE_TEXT = "1 to 64 letters, digits, '_' or '-', and not 'main'";

/** Most levels of sub-agents under a session (`maxDepth`). */
const MAX_SUBAGENT_DEPTH = 4;

/** Most sub-agents of one session running at once (`maxConcurrent`). */
const MAX_SUBAGENT_CONCURRENCY = 32;

/** Whether `name` may name a sub-agent. */
const isSubagentName = (name: unknown): boolean =>
  typeof name === 'string' && SUBAGENT_NAME_RULE.test(name) && name !== 'main';

const requiredText = (name: string) =>
  required((value, issue) => {
    if (typeof value !== 'string' || value.trim() === '') {
      issue(`${name} must be a non-empty string, got ${describeValue(value)}`);
    }
  });

const intFromOne = (name: string, max: number) =>
  rule((value, issue) => {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
      issue(`${name} must be an integer from 1 to ${max}, got ${describeValue(value)}`);
    }
  });

/** An optional array of strings `ok` accepts, each once. */
const namesRule = (name: string, ok: (v: unknown) => boolean, what: string) =>
  rule((value, issue) => {
    if (value === undefined) return;
    if (!Array.isArray(value)) {
      issue(`${name} must be an array of ${what}, got ${describeValue(value)}`);
      return;
    }
    const seen = new Set<unknown>();
    value.forEach((v: unknown, i) => {
      if (!ok(v)) issue(`${name}[${i}] must be ${what}, got ${describeValue(v)}`);
      else if (seen.has(v)) issue(`${name} names '${String(v)}' twice`);
      seen.add(v);
    });
  });

const subagentModel = (name: string) =>
  rule((value, issue) => {
    if (value === undefined || value === 'inherit' || isAgentModel(value)) return;
    if (typeof value !== 'string' || value === '') {
      issue(`${name} must be 'inherit', a model id or a model object, got ${describeValue(value)}`);
    }
  });

const subagentPermission = (name: string) =>
  rule((value, issue) => {
    if (value === undefined || value === 'inherit' || typeof value === 'function') return;
    if (!(PERMISSION_PRESETS as readonly unknown[]).includes(value)) {
      issue(
        `${name} must be 'inherit', a function or one of ${PERMISSION_PRESETS.map((p) => `'${p}'`).join(', ')}, got ${describeValue(value)}`,
      );
    }
  });

/** The rules of one sub-agent's definition, at `path` (`advanced.subagents.agents.<name>`). */
function subagentSchema(path: string) {
  const hooks = hooksSchema(`${path}.hooks`);
  return z.strictObject({
    description: requiredText(`${path}.description`),
    prompt: requiredText(`${path}.prompt`),
    tools: namesRule(
      `${path}.tools`,
      (v) => typeof v === 'string' && v !== '',
      'tool names (strings)',
    ),
    model: subagentModel(`${path}.model`),
    maxTurns: positiveInt(`${path}.maxTurns`),
    hooks: rule((value, issue) => {
      if (value === 'inherit') return;
      const parsed = hooks.safeParse(value);
      if (!parsed.success) for (const i of parsed.error.issues) issue(i.message);
    }),
    permission: subagentPermission(`${path}.permission`),
    subagents: namesRule(`${path}.subagents`, isSubagentName, 'sub-agent names'),
    timeoutMs: timeoutMs(`${path}.timeoutMs`),
  });
}

/** Each problem of `value` under `schema`, the path prefixed to those zod words itself. */
function forward(schema: z.ZodType, value: unknown, path: string, issue: Issue): void {
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  for (const i of parsed.error.issues) {
    issue(i.code === 'custom' ? i.message : `${[path, ...i.path].join('.')}: ${i.message}`);
  }
}

const agentsSchema = required((value, issue) => {
  const path = 'advanced.subagents.agents';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(
      `${path} must be an object of sub-agent definitions by name, got ${describeValue(value)}`,
    );
    return;
  }
  const entries = Object.entries(value);
  if (entries.length === 0) issue(`${path} must name at least one sub-agent`);
  for (const [name, definition] of entries) {
    if (!isSubagentName(name)) {
      issue(`${path} has '${name}', which is not a sub-agent name (${SUBAGENT_NAME_RULE_TEXT})`);
    } else if (typeof definition !== 'object' || definition === null) {
      issue(
        `${path}.${name} must be a sub-agent definition { description, prompt, ... }, got ${describeValue(definition)}`,
      );
    } else {
      forward(subagentSchema(`${path}.${name}`), definition, `${path}.${name}`, issue);
    }
  }
});

/** The rules of `advanced.subagents`, a field each. */
export const subagentsSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(
      `advanced.subagents must be an object { agents, maxDepth?, maxConcurrent?, timeoutMs? }, got ${describeValue(value)}`,
    );
    return;
  }
  const table = z.strictObject({
    agents: agentsSchema,
    maxDepth: intFromOne('advanced.subagents.maxDepth', MAX_SUBAGENT_DEPTH),
    maxConcurrent: intFromOne('advanced.subagents.maxConcurrent', MAX_SUBAGENT_CONCURRENCY),
    timeoutMs: timeoutMs('advanced.subagents.timeoutMs'),
  });
  forward(table, value, 'advanced.subagents', issue);
});
