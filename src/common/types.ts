/**
 * The shapes of the hooks contract (`hooks-contract.md` §2, §3, §6). Workflow-safe.
 *
 * @module
 */
import type { HookEvent } from './hook-events.js';
import type { JsonObject, JsonValue } from './json.js';

/** A session's id: the workflow id is derived from it. */
export type SessionId = string;

/** What a tool result shows the model: text. */
export type ToolModelContent = string;

/** An image in a prompt: base64 data or a URL, with its media type. */
export interface ImagePart {
  /** Discriminant: `'image'`. */
  type: 'image';
  /** Base64 data (no `data:` prefix) or an `https:`/`data:` URL. */
  image: string;
  /** e.g. `image/png`. */
  mediaType?: string;
}

/** A text part of a prompt. */
export interface TextPart {
  /** Discriminant: `'text'`. */
  type: 'text';
  /** The text. */
  text: string;
}

/** A user prompt: plain text, or text and image parts in order. */
export type Prompt = string | Array<TextPart | ImagePart>;

/** The result of one tool call (contract §6). `model` is what the model sees. */
export type ToolResult =
  | {
      status: 'success';
      model: ToolModelContent;
      display?: ToolDisplay;
      data?: JsonValue;
      metadata?: JsonObject;
      /** Where the full output is kept when `model` was cut (`session.readPayload(ref)`). */
      outputRef?: string;
    }
  | {
      status: 'error';
      model: ToolModelContent;
      display?: ToolDisplay;
      error: { message: string; type: string; code?: string; details?: JsonValue };
      metadata?: JsonObject;
      /** Where the full output is kept when `model` was cut (`session.readPayload(ref)`). */
      outputRef?: string;
    };

/** The part of a tool result meant for people and UIs; hooks never change it. */
export interface ToolDisplay {
  /** One line saying what the call did. */
  summary: string;
  /** Longer text for people, when the tool gives one. */
  detail?: string;
}

/** A tool's kind, used by permission policies. */
export type ToolKind = 'readonly' | 'write' | 'execute';

/**
 * What a callback receives (contract §2). Every input has `event`, `sessionId` and
 * `abortSignal`; the other fields depend on the event.
 */
export interface HookInput {
  /** The event dispatched. */
  event: HookEvent;
  /** The session's id. */
  sessionId: SessionId;
  /**
   * Aborts when the caller aborts (reason: the object passed to `abort()`) or when the
   * event's budget runs out (reason: a `HookTimeoutError`). Always present at run time.
   */
  abortSignal?: AbortSignal;
  /** The tool's name (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure). */
  toolName?: string;
  /** The tool call's input, as earlier hooks left it (the same four events). */
  toolInput?: JsonObject;
  /** The result's `model` part (PostToolUse, PostToolUseFailure). */
  toolOutput?: ToolModelContent;
  /** The tool's error (PostToolUseFailure). */
  error?: Error;
  /** In a sub-agent's session only: the session whose `Task` call started it. */
  parentSessionId?: string;
  /** In a sub-agent's session only: its path of sub-agent names, e.g. `main/researcher`. */
  agentPath?: string;
  /** In a sub-agent's session only: how deep it is, 1 under the top session (top: absent, read as 0). */
  depth?: number;
  /**
   * For a call of an MCP tool (`mcpServers`) only, in the four tool events: its server's name
   * (`github` in `mcp__github__create_issue`).
   */
  mcpServer?: string;
  /** For a call of an MCP tool only: the tool's own name on its server (`create_issue`). */
  mcpTool?: string;
  /**
   * UserPromptSubmit and PreToolUse, in a session with a budget (`advanced.budgets`, session
   * `budgets`): what is left of each cap set, e.g. `{ remaining: { totalTokens: 1200 } }`
   * (PreToolUse: the call itself counted). With shared budgets (`advanced.budgets.shared`),
   * `shared` by key once the session holds a lease of it: what is left of each cap as of the
   * session's last request to it, e.g. `{ 'tenant:acme:day': { costUsd: 31.5 } }`.
   */
  budget?: {
    remaining: Record<string, number>;
    shared?: Record<string, Record<string, number>>;
  };
  /** The event's other fields (`toolUseId`, `userPrompt`, `reason`, ...). */
  [key: string]: unknown;
}

/** What a callback returns (contract §3). */
export interface HookOutput {
  /**
   * `continue`, or `skip` / `abort`: the first callback of the event that returns either
   * decides; what each does depends on the event (contract §5).
   */
  action: 'continue' | 'skip' | 'abort';
  /** Fields to change in the event's input, shallow-merged over it in callback order. */
  modifiedInput?: JsonObject;
  /** A replacement for the tool result's `model` part (PostToolUse, PostToolUseFailure). */
  modifiedOutput?: JsonValue;
  /** Why: given to the model or the caller with a `skip` or an `abort`. */
  reason?: string;
}

/** A hook callback: one object in, one out. */
export type HookCallback = (input: HookInput) => Promise<HookOutput>;

/** Callbacks by event. */
export type HookMap = Partial<Record<HookEvent, HookCallback[]>>;

/** Why a session ended, as SessionEnd's `reason` says. */
export type SessionEndReason = 'other' | 'idle_timeout' | 'cancelled' | 'error';
