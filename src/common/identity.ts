/**
 * An agent definition's identity: its name, its version, and the manifest its fingerprint is
 * the hash of. The rules, the shapes that travel (session input, activity inputs, refusals)
 * and the comparison of two manifests. Workflow-safe: the hashing itself is in
 * `src/definition/fingerprint.ts` (it needs `node:crypto`).
 *
 * The name becomes a Temporal Worker Deployment name and the version its build id, so both
 * follow Temporal's rules (stricter subsets of them, so they are also safe in task queue
 * names, log lines and shell arguments).
 *
 * @module
 */
import { DEFAULTS } from './defaults.js';
import { ALL_HOOK_EVENTS, type HookEvent } from './hook-events.js';

/**
 * Agent names: 1 to 100 characters, letters, digits, `-` and `_`, starting with a letter or
 * digit. Temporal refuses `.` and `:` in a Worker Deployment name (its version ids are
 * `name.buildId` and `name:buildId`), and the name is part of the default task queue.
 */
export const AGENT_NAME_RULE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

/**
 * Versions (Temporal build ids): 1 to 255 characters (Temporal's `limit.workerBuildIdSize`
 * is 255 bytes), letters, digits, `.`, `_` and `-`, starting with a letter or digit (so never
 * Temporal's reserved `__unversioned__`).
 */
export const VERSION_RULE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/**
 * The Temporal identity of a worker of agent `agentName` version `version`: Temporal's usual
 * `<pid>@<host>` (`base`) followed by ` <agentName>@<version>`. Task queue descriptions list
 * pollers by identity, so a client can tell which versions poll a queue without Worker
 * Deployments (`session.upgrade()` with versioning off).
 */
export function agentWorkerIdentity(base: string, agentName: string, version: string): string {
  return `${base} ${agentName}@${version}`;
}

/**
 * The version a poller of agent `agentName` runs, from its identity ({@link agentWorkerIdentity});
 * `undefined` when the identity names none (a worker of another agent, or of an SDK release
 * before identities named versions).
 */
export function versionOfWorkerIdentity(identity: string, agentName: string): string | undefined {
  const tag = ` ${agentName}@`;
  const at = identity.lastIndexOf(tag);
  if (at < 0) return undefined;
  const version = identity.slice(at + tag.length);
  return VERSION_RULE.test(version) ? version : undefined;
}

/** The rule of {@link AGENT_NAME_RULE}, in words, for error messages. */
export const AGENT_NAME_RULE_TEXT =
  "1 to 100 letters, digits, '-' or '_', starting with a letter or digit " +
  "(it becomes a Temporal Worker Deployment name, which may not contain '.' or ':')";

/** The rule of {@link VERSION_RULE}, in words, for error messages. */
export const VERSION_RULE_TEXT =
  "1 to 255 letters, digits, '.', '_' or '-', starting with a letter or digit " +
  '(it becomes a Temporal Worker Deployment build id)';

/** The default task queue of an agent named `name`: `durable-agent.<name>`. */
export function defaultTaskQueueOf(name: string): string {
  return `${DEFAULTS.taskQueuePrefix}.${name}`;
}

/**
 * The options that change decisions, recorded by value in the manifest (they are short
 * and not secret, so a difference names the option and both values):
 * - `hookTimeoutMs`, `sessionEndHookTimeoutMs`: whether a slow callback's decision stands or
 *   the event fails with `HOOK_TIMEOUT`;
 * - `toolHookErrors`: whether a failed tool hook rejects the `send()` or becomes a tool error;
 * - `permissionTimeoutMs`: when an unanswered `ask` becomes a deny;
 * - `maxTurns`: when a `send()` stops with `max_turns`.
 */
export interface DecidingOptions {
  hookTimeoutMs: number;
  sessionEndHookTimeoutMs: number;
  toolHookErrors: 'tool-error' | 'reject';
  permissionTimeoutMs: number;
  maxTurns: number;
}

/** The names of {@link DecidingOptions}, in manifest order. */
export const DECIDING_OPTIONS: readonly (keyof DecidingOptions)[] = [
  'hookTimeoutMs',
  'sessionEndHookTimeoutMs',
  'toolHookErrors',
  'permissionTimeoutMs',
  'maxTurns',
];

/**
 * What an agent definition's fingerprint is the hash of: every part that decides, each
 * part hashed on its own so that two manifests name what differs. Hashes are the first 12
 * hex digits of a SHA-256.
 */
export interface DefinitionManifest {
  /** Each callback's source (`fn.toString()`), hashed, by event, in run order. */
  hooks: Partial<Record<HookEvent, string[]>>;
  /** `preset:<name>`, or `function:<hash of its source>`. */
  permission: string;
  /** Per tool name: the hash of its kind, description, input JSON schema and `affectedPaths` source. */
  tools: Record<string, string>;
  /** The deciding options, by value. */
  options: DecidingOptions;
  /**
   * `advanced.subagents`: `limits` by value (`maxDepth 1, maxConcurrent 4, timeoutMs
   * 3600000`), and per sub-agent the hash of its tools, `maxTurns`, hooks, permission,
   * `subagents` and `timeoutMs`. Absent when the definition has none (so the fingerprints of
   * definitions without sub-agents are those they always had).
   */
  subagents?: { limits: string; agents: Record<string, string> };
  /**
   * `advanced.permissionRules`, when set: a hash of its `allow`, `ask` and `deny` patterns,
   * in order. Absent when the definition has none (its fingerprint is the one it always had).
   */
  permissionRules?: string;
  /**
   * `mcpServers`, when set: per server, a hash of its transport, command, args, cwd and url,
   * and the names (never the values) of its env variables and headers.
   */
  mcpServers?: Record<string, string>;
  /** `advanced.budgets`, when set: a hash of its caps, prices and `maxOutputTokens`. */
  budgets?: string;
  /**
   * `advanced.approvals`, when set: a hash of its timing, `escalateTo` and whether it has a
   * `notify` callback (not the callback's source).
   */
  approvals?: string;
}

/**
 * What a session records of the definition it started with (workflow input), and what
 * every activity input of the session carries: the version the session runs, and the
 * fingerprint of the definition that version meant when it started.
 */
export interface SessionIdentity {
  /** The version (a Temporal build id): `AgentOptions.version`, else the fingerprint. */
  version: string;
  /** 16 hex digits: the first 64 bits of the SHA-256 of the manifest. */
  fingerprint: string;
}

/** Stable codes of a worker's refusal of a task of another definition. */
type VersionRefusalCode = 'WORKER_VERSION_MISMATCH' | 'VERSION_FINGERPRINT_MISMATCH';

/**
 * A worker's refusal of a task of a session it does not run the definition of: the first
 * detail of the `ApplicationFailure` (type {@link VERSION_REFUSAL_TYPE}) the activity fails
 * with. The workflow retries the task (another worker may run the right version) and, once
 * the task's budget is spent, fails with `code`, naming both versions.
 */
export interface VersionRefusal {
  code: VersionRefusalCode;
  message: string;
  agentName: string;
  sessionId: string;
  /** What the session runs. */
  sessionVersion: string;
  sessionFingerprint: string;
  /** The versions of this agent name the refusing worker runs (none: it has the name only in other versions). */
  workerVersions: string[];
  /** The refusing worker's fingerprint, for `VERSION_FINGERPRINT_MISMATCH`. */
  workerFingerprint?: string;
  /** The refusing worker's manifest, for `VERSION_FINGERPRINT_MISMATCH`: the workflow names what differs. */
  workerManifest?: DefinitionManifest;
}

/** `ApplicationFailure.type` of a version refusal. Recorded in histories: never rename it. */
export const VERSION_REFUSAL_TYPE = 'WorkerVersionMismatch';

/**
 * What differs between two manifests, one short phrase each, e.g.
 * `UserPromptSubmit[0] callback source`, `tool Bash (kind, description, schema or affectedPaths)`,
 * `option hookTimeoutMs (600000 vs 5000)`, `sub-agent researcher (tools, ...)`. Empty when
 * they are the same. Pure.
 */
export function manifestDifferences(a: DefinitionManifest, b: DefinitionManifest): string[] {
  const out: string[] = [];
  for (const event of ALL_HOOK_EVENTS) {
    const left = a.hooks[event] ?? [];
    const right = b.hooks[event] ?? [];
    if (left.length !== right.length) {
      out.push(`${event} callback count (${left.length} vs ${right.length})`);
    }
    for (let i = 0; i < Math.min(left.length, right.length); i++) {
      if (left[i] !== right[i]) out.push(`${event}[${i}] callback source`);
    }
  }
  if (a.permission !== b.permission) {
    out.push(`permission policy (${a.permission} vs ${b.permission})`);
  }
  if (a.permissionRules !== b.permissionRules) {
    out.push(
      a.permissionRules === undefined || b.permissionRules === undefined
        ? `permission rules (only in the ${a.permissionRules === undefined ? 'second' : 'first'})`
        : 'permission rules (allow, ask or deny patterns)',
    );
  }
  const tools = [...new Set([...Object.keys(a.tools), ...Object.keys(b.tools)])].sort();
  for (const tool of tools) {
    const left = a.tools[tool];
    const right = b.tools[tool];
    if (left === undefined) out.push(`tool ${tool} (only in the second)`);
    else if (right === undefined) out.push(`tool ${tool} (only in the first)`);
    else if (left !== right) out.push(`tool ${tool} (kind, description, schema or affectedPaths)`);
  }
  for (const option of DECIDING_OPTIONS) {
    if (a.options[option] !== b.options[option]) {
      out.push(`option ${option} (${String(a.options[option])} vs ${String(b.options[option])})`);
    }
  }
  out.push(...subagentDifferences(a.subagents, b.subagents));
  if (a.budgets !== b.budgets) {
    out.push(
      a.budgets === undefined || b.budgets === undefined
        ? `budgets (only in the ${a.budgets === undefined ? 'second' : 'first'})`
        : 'budgets (caps, prices or maxOutputTokens)',
    );
  }
  if (a.approvals !== b.approvals) {
    out.push(
      a.approvals === undefined || b.approvals === undefined
        ? `approval stages (only in the ${a.approvals === undefined ? 'second' : 'first'})`
        : 'approval stages (remindAfterMs, escalateAfterMs, escalateTo or notify)',
    );
  }
  return out;
}

/** What differs between two manifests' `subagents`, as {@link manifestDifferences} says it. */
function subagentDifferences(
  a: DefinitionManifest['subagents'],
  b: DefinitionManifest['subagents'],
): string[] {
  if (a === undefined && b === undefined) return [];
  if (a === undefined) return ['sub-agents (only in the second)'];
  if (b === undefined) return ['sub-agents (only in the first)'];
  const out: string[] = [];
  if (a.limits !== b.limits) out.push(`sub-agent limits (${a.limits} vs ${b.limits})`);
  const names = [...new Set([...Object.keys(a.agents), ...Object.keys(b.agents)])].sort();
  for (const name of names) {
    const left = a.agents[name];
    const right = b.agents[name];
    if (left === undefined) out.push(`sub-agent ${name} (only in the second)`);
    else if (right === undefined) out.push(`sub-agent ${name} (only in the first)`);
    else if (left !== right) {
      out.push(`sub-agent ${name} (tools, maxTurns, hooks, permission, subagents or timeoutMs)`);
    }
  }
  return out;
}
