/**
 * Permission rules (`advanced.permissionRules`): tool name patterns that decide a call before
 * the preset or the permission function does, as Claude Code's `permissions` settings name
 * them. Pure and workflow-safe: the workflow decides with them, and replay decides the same.
 *
 * @module
 */
import { MCP_TOOL_PREFIX } from './mcp.js';
import type { PermissionResult } from './permission.js';

/**
 * `advanced.permissionRules`: lists of tool name patterns. A pattern is an exact tool name
 * (`Read`), a name with `*` globs anywhere (`mcp__github__*`, `mcp__*__delete_*`), or a bare
 * MCP server (`mcp__github`: every tool of that server).
 */
export interface PermissionRules {
  /** Calls of these tools run without asking (unless an `ask` or `deny` pattern matches too). */
  allow?: string[];
  /** Calls of these tools wait for a person, as a preset's `ask` does (unless `deny` matches). */
  ask?: string[];
  /** Calls of these tools are denied, whatever else matches. */
  deny?: string[];
}

/** A rule list's name, in the order they are tried: the first that matches decides. */
export type PermissionRuleList = 'deny' | 'ask' | 'allow';

/** The lists, strongest first: `deny` wins over `ask`, which wins over `allow`. */
const PERMISSION_RULE_LISTS: readonly PermissionRuleList[] = ['deny', 'ask', 'allow'];

/** What a pattern may hold: letters, digits, `_`, `-`, and `*` (any run of characters). */
const PERMISSION_RULE_PATTERN = /^[A-Za-z0-9_*-]+$/;

/** The rule that decided a call: its list and its pattern as given. */
export interface PermissionRuleMatch {
  /** The list the pattern is in: `deny`, `ask` or `allow`. */
  list: PermissionRuleList;
  /** The pattern that matched the tool's name, as given (`mcp__github__*`). */
  pattern: string;
}

/**
 * Whether `pattern` matches the tool name `toolName`: `*` stands for any run of characters
 * (none included), everything else for itself (case-sensitive); `mcp__<server>` with no
 * further `__` also matches every `mcp__<server>__<tool>`. Pure.
 */
export function toolNameMatches(pattern: string, toolName: string): boolean {
  if (globMatches(pattern, toolName)) return true;
  const server = pattern.slice(MCP_TOOL_PREFIX.length);
  const bareServer = pattern.startsWith(MCP_TOOL_PREFIX) && server !== '' && !server.includes('__');
  return bareServer && globMatches(`${pattern}__*`, toolName);
}

/**
 * Whether a sub-agent limited to `patterns` (its MCP tools, `SessionWorkflowInput.mcpAllow`)
 * may call `toolName`: one of them matches it ({@link toolNameMatches}); `undefined`: no
 * limit. Pure.
 */
export function allowedByPatterns(
  patterns: readonly string[] | undefined,
  toolName: string,
): boolean {
  return patterns === undefined || patterns.some((pattern) => toolNameMatches(pattern, toolName));
}

/** `*` is any run of characters; the rest is literal. Linear enough for names and patterns. */
function globMatches(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = text.indexOf(middle, at);
    if (found === -1 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/**
 * The rule that decides a call of `toolName`: the first matching pattern of `deny`, else of
 * `ask`, else of `allow` (whatever the order the lists were given in); `undefined` when none
 * matches (the preset or the permission function decides). Pure.
 */
export function matchPermissionRule(
  rules: PermissionRules | undefined,
  toolName: string,
): PermissionRuleMatch | undefined {
  if (!rules) return undefined;
  for (const list of PERMISSION_RULE_LISTS) {
    const pattern = rules[list]?.find((p) => toolNameMatches(p, toolName));
    if (pattern !== undefined) return { list, pattern };
  }
  return undefined;
}

/**
 * What a matching rule decides: `deny` denies naming the rule, `ask` asks a person (the ask's
 * message names the rule), `allow` runs the call. Pure.
 */
export function ruleDecision(match: PermissionRuleMatch): PermissionResult {
  const named = `permissionRules.${match.list} '${match.pattern}'`;
  switch (match.list) {
    case 'deny':
      return { behavior: 'deny', message: `Denied by ${named}` };
    case 'ask':
      return { behavior: 'ask', message: `Asked by ${named}` };
    case 'allow':
      return { behavior: 'allow' };
  }
}

/**
 * What is wrong with `value` as `advanced.permissionRules`, one message a problem, each
 * naming the field (`advanced.permissionRules.deny[2]`); empty when it is good. Pure.
 */
export function permissionRulesProblems(
  value: unknown,
  name = 'advanced.permissionRules',
): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [`${name} must be an object { allow?, ask?, deny? } of tool name patterns`];
  }
  const problems: string[] = [];
  for (const [key, list] of Object.entries(value)) {
    if (!(PERMISSION_RULE_LISTS as readonly string[]).includes(key)) {
      problems.push(`${name} has an unknown key '${key}' (keys: allow, ask, deny)`);
    } else if (list !== undefined && !Array.isArray(list)) {
      problems.push(`${name}.${key} must be an array of tool name patterns`);
    } else {
      (list as unknown[] | undefined)?.forEach((pattern, i) => {
        const problem = patternProblem(pattern);
        if (problem) problems.push(`${name}.${key}[${i}] ${problem}`);
      });
    }
  }
  return problems;
}

function patternProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== 'string') {
    return `must be a string, got ${pattern === null ? 'null' : typeof pattern === 'number' ? String(pattern) : typeof pattern}`;
  }
  if (pattern === '') return 'is empty: give a tool name or pattern such as mcp__github__*';
  if (!PERMISSION_RULE_PATTERN.test(pattern)) {
    return `'${pattern.length > 60 ? `${pattern.slice(0, 60)}...` : pattern}' has characters outside [A-Za-z0-9_*-]`;
  }
  return undefined;
}
