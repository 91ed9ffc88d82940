/**
 * The fingerprint of an agent definition: a hash of what decides, so that a session's hooks
 * always run the definition it was started with (see `src/common/identity.ts` for the shapes
 * and rules).
 *
 * What it covers: each callback's source by event and position, the permission policy
 * (preset name or the function's source), the tools (name, kind, description, input JSON
 * schema, `affectedPaths` source), the deciding options ({@link DECIDING_OPTIONS}) and, only
 * when set, `advanced.permissionRules` (each list's patterns, in order), `advanced.subagents`
 * (its limits, and each sub-agent but for its prompt and model) and `mcpServers`.
 *
 * What it leaves out, on purpose: the model and its key or URL (the model proposes, hooks and
 * permission decide; a key rotation is not a policy change), `workspaceRoots` and `toolEnv`
 * (absolute paths and environments differ per machine of one fleet), tool `execute` code,
 * payload store, logging, Temporal settings, output and context caps, tool and model
 * timeouts. Set `version` yourself to make any of these a new version.
 *
 * Sources are compared as text, normalized ({@link normalizedSource}) so that two builds of
 * one definition agree (tsx minifies whitespace, vitest keeps the layout); a minifier that
 * renames variables still makes another fingerprint. A callback reading configuration it
 * captured (an environment variable, a closure's value) has one fingerprint for every value.
 * Give such definitions an explicit `version`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../common/json.js';
import type { BudgetOptions } from '../common/budgets.js';
import type { SessionApprovalPolicy } from '../common/approval-stages.js';
import type { McpServers } from '../mcp/options.js';
import type { HookEvent } from '../common/hook-events.js';
import {
  DECIDING_OPTIONS,
  type DecidingOptions,
  type DefinitionManifest,
  type SessionIdentity,
} from '../common/identity.js';
import type { PermissionHandler, PermissionPreset } from '../common/permission.js';
import type { PermissionRules } from '../common/permission-rules.js';
import type { HookCallback, HookMap } from '../common/types.js';
import type { ToolDefinition } from '../tools/tool.js';
import type { ResolvedSubagents } from './options.js';

/** What the fingerprint is computed from: the parts of resolved options that decide. */
interface DecidingDefinition extends DecidingOptions {
  hooks: HookMap;
  permission: PermissionPreset | PermissionHandler;
  /** `advanced.permissionRules`; absent, the manifest has none (and earlier fingerprints hold). */
  permissionRules?: Required<PermissionRules>;
  tools: readonly ToolDefinition[];
  /** `advanced.subagents`; absent, the manifest has no `subagents` (and earlier fingerprints hold). */
  subagents?: ResolvedSubagents;
  /** `mcpServers`; absent, the manifest has no `mcpServers` (and earlier fingerprints hold). */
  mcpServers?: McpServers;
  /** `advanced.budgets`; absent, the manifest has no `budgets` (and earlier fingerprints hold). */
  budgets?: BudgetOptions;
  /** `advanced.approvals`; absent, the manifest has no `approvals` (earlier fingerprints hold). */
  approvals?: { policy: SessionApprovalPolicy };
}

const hash = (text: string, digits: number): string =>
  createHash('sha256').update(text).digest('hex').slice(0, digits);

function schemaText(schema: unknown): string {
  try {
    return canonicalJson(
      z.toJSONSchema(schema as z.ZodType, { unrepresentable: 'any', io: 'input' }),
    );
  } catch {
    // A schema zod cannot describe: its constructor stands for it (documented limit).
    return `unrepresentable:${(schema as object | undefined)?.constructor?.name ?? typeof schema}`;
  }
}

/**
 * A function's source in a form two builds of one definition share: whitespace and comments
 * outside string literals dropped, `(x) =>` as `x =>`, no trailing commas, no `;` next to
 * `}`, imports by their own names (Vite's SSR transform, which vitest uses, reads them through
 * `__vite_ssr_import_N__`).
 * Transpilers print one source differently (tsx minifies whitespace, vitest keeps the
 * layout); string and template literals are kept as they are. Pure.
 */
export function normalizedSource(fn: unknown): string {
  const source = String(fn);
  let out = '';
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j;
    } else if (c === '/' && source[i + 1] === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? source.length : end + 1;
    } else if (!/\s/.test(c)) {
      out += c;
    }
  }
  return (
    out
      // Vite's SSR transform (vitest) reads imports through module objects.
      .replace(/\(0,__vite_ssr_import_\d+__\.([\w$]+)\)/g, '$1')
      .replace(/__vite_ssr_import_\d+__\./g, '')
      .replace(/\(([A-Za-z_$][\w$]*)\)=>/g, '$1=>')
      .replace(/,([)\]}])/g, '$1')
      .replace(/;}/g, '}')
      .replace(/};/g, '}')
  );
}

/** Each callback's source hash by event, in run order (events without callbacks left out). */
function hookHashes(map: HookMap): Partial<Record<HookEvent, string[]>> {
  const hooks: Partial<Record<HookEvent, string[]>> = {};
  for (const [event, callbacks] of Object.entries(map) as Array<
    [HookEvent, HookCallback[] | undefined]
  >) {
    if (callbacks && callbacks.length > 0) {
      hooks[event] = callbacks.map((callback) => hash(normalizedSource(callback), 12));
    }
  }
  return hooks;
}

/** `preset:<name>`, or `function:<hash of its source>`. */
function permissionText(permission: PermissionPreset | PermissionHandler): string {
  return typeof permission === 'function'
    ? `function:${hash(normalizedSource(permission), 12)}`
    : `preset:${permission}`;
}

/**
 * The manifest's `subagents`: the limits by value, and per sub-agent a hash of what decides
 * in it (its tools by name, `maxTurns`, hooks, permission, `subagents`, `timeoutMs`). Its
 * `prompt` and `model` stay out, as the agent's model does; its `description` is in the
 * `Task` tool's hash.
 */
function subagentsManifest(
  subagents: ResolvedSubagents,
): NonNullable<DefinitionManifest['subagents']> {
  const agents: Record<string, string> = {};
  for (const [name, agent] of Object.entries(subagents.agents)) {
    agents[name] = hash(
      canonicalJson({
        tools: agent.tools.map((tool) => tool.name),
        maxTurns: agent.maxTurns,
        hooks: agent.hooks ? hookHashes(agent.hooks) : 'inherit',
        permission: agent.permission ? permissionText(agent.permission) : 'inherit',
        subagents: agent.subagents,
        timeoutMs: agent.timeoutMs,
        // Only when it names MCP tools, so earlier fingerprints hold.
        ...(agent.mcpTools ? { mcpTools: agent.mcpTools } : {}),
      }),
      12,
    );
  }
  const { maxDepth, maxConcurrent, timeoutMs } = subagents;
  return {
    limits: `maxDepth ${maxDepth}, maxConcurrent ${maxConcurrent}, timeoutMs ${timeoutMs}`,
    agents,
  };
}

/**
 * The manifest's `mcpServers`: per server, what says which server it is (transport, command,
 * args, cwd, url) and the names of what it is given (env, headers), never their values,
 * which hold secrets and may differ between workers. Its tools are listed by each session.
 */
function mcpServersManifest(servers: McpServers): Record<string, string> {
  const manifest: Record<string, string> = {};
  for (const [name, server] of Object.entries(servers)) {
    const shape =
      server.type === 'http'
        ? { type: 'http', url: server.url, headers: Object.keys(server.headers ?? {}).sort() }
        : {
            type: 'stdio',
            command: server.command,
            args: server.args ?? [],
            cwd: server.cwd ?? null,
            env: Object.keys(server.env ?? {}).sort(),
          };
    manifest[name] = hash(canonicalJson(shape), 12);
  }
  return manifest;
}

/** The manifest of a definition: each deciding part hashed on its own. Pure. */
function manifestOf(definition: DecidingDefinition): DefinitionManifest {
  const hooks = hookHashes(definition.hooks);
  const tools: Record<string, string> = {};
  for (const tool of definition.tools) {
    tools[tool.name] = hash(
      canonicalJson({
        kind: tool.kind,
        description: tool.description,
        inputSchema: schemaText(tool.inputSchema),
        affectedPaths: tool.affectedPaths ? normalizedSource(tool.affectedPaths) : null,
        // Only when given, so earlier fingerprints hold.
        ...(tool.idempotent !== undefined ? { idempotent: tool.idempotent } : {}),
      }),
      12,
    );
  }
  const options = Object.fromEntries(
    DECIDING_OPTIONS.map((name) => [name, definition[name]]),
  ) as unknown as DecidingOptions;
  return {
    hooks,
    permission: permissionText(definition.permission),
    tools,
    options,
    // Only when set, so that every definition without them keeps its fingerprint.
    ...(definition.permissionRules
      ? { permissionRules: hash(canonicalJson(definition.permissionRules), 12) }
      : {}),
    ...(definition.subagents ? { subagents: subagentsManifest(definition.subagents) } : {}),
    ...(definition.mcpServers ? { mcpServers: mcpServersManifest(definition.mcpServers) } : {}),
    ...(definition.budgets ? { budgets: hash(canonicalJson(definition.budgets), 12) } : {}),
    // The policy only: the `notify` callback's source is not part of it.
    ...(definition.approvals
      ? { approvals: hash(canonicalJson(definition.approvals.policy), 12) }
      : {}),
  };
}

/** The fingerprint of a manifest: 16 hex digits of the SHA-256 of its canonical JSON. Pure. */
export function fingerprintOf(manifest: DefinitionManifest): string {
  return hash(canonicalJson(manifest), 16);
}

/**
 * The identity of a definition: its manifest, its fingerprint and its version (`version`
 * when given, else the fingerprint).
 */
export function identityOf(
  definition: DecidingDefinition,
  version: string | undefined,
): SessionIdentity & { manifest: DefinitionManifest } {
  const manifest = manifestOf(definition);
  const fingerprint = fingerprintOf(manifest);
  return { version: version ?? fingerprint, fingerprint, manifest };
}
