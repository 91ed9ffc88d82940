/**
 * What a parsed command line is ({@link ParsedArgs}), what a command runs with
 * ({@link CommandArgs}) and where it writes ({@link CliOutput}): the types the parser, the
 * command table and the commands share.
 *
 * @module
 */
import type { SessionListStatus } from '../client/session-status.js';
import type { ResolvedTemporalConnection } from '../temporal/connection-config.js';
import type { CommandName } from './command-table.js';

/** A parsed command line. */
export type ParsedArgs =
  | { kind: 'help'; command?: CommandName }
  /** `--version` or `-v` with no command: print the package's version. */
  | { kind: 'version' }
  | {
      kind: 'command';
      command: CommandName;
      /** The command's positionals, in order (the required ones all present). */
      args: string[];
      /** `--address`, else `TEMPORAL_ADDRESS`, else `127.0.0.1:7233`. */
      address: string;
      /** Whether the address came from `--address` (not the environment or the default). */
      addressGiven: boolean;
      /** `--namespace`, else `TEMPORAL_NAMESPACE`, else the profile's, else `default`. */
      namespace: string;
      /**
       * The connection: the flags, else the `TEMPORAL_*` variables, else the profile of
       * Temporal's config file (as the `temporal` CLI); plain for `dev` and `golden`.
       */
      connection: ResolvedTemporalConnection;
      /** `--payloads`: folder of the agent's payload store. @default `.durable-agent/payloads` */
      payloads: string;
      /**
       * `--timeout`: how long the command waits on the server and on a worker, in all, ms.
       * @default 10 s (`DEFAULT_TIMEOUT_MS` of cli-defaults.ts)
       */
      timeoutMs: number;
      /** `--wait` (approve, deny): send even when no worker answers, and wait for one. */
      wait: boolean;
      /**
       * `--identity` (approve, deny): who answers, recorded with the answer in the session's
       * history (what `inspect` shows as who approved or denied). @default `<user>@<host>`
       */
      identity?: string;
      limit?: number;
      /**
       * `--status` (sessions): only sessions in this status (`DurableAgentStatus` of running
       * executions; Temporal's `ExecutionStatus` of the others).
       */
      status?: SessionListStatus;
      /** `--agent` (sessions): only sessions of the agent of this name (`DurableAgentName`). */
      agent?: string;
      json: boolean;
      input?: string;
      /**
       * `--digest` (approve, deny): the approval digest the person was shown (`pending`'s
       * DIGEST, 12 to 64 hex digits); the session refuses the answer when the request's is
       * another. @default the digest of the request as the command reads it
       */
      digest?: string;
      message?: string;
      interrupt: boolean;
      /** `--force` (init): write into a folder that is not empty, over its files. */
      force: boolean;
      ui: boolean;
      db?: string;
      /** `--port` (codec-server). */
      port?: number;
      /** `--host` (codec-server). */
      host?: string;
      /** `--cors-origin`, each time given (codec-server). */
      corsOrigins: string[];
      /** `--task-queue` (ui): only the sessions of this task queue. */
      taskQueue?: string;
      /** `--version` (gate): the running version whose sessions are replayed. */
      version?: string;
      /** `--since` (gate): only sessions started this long ago or later, ms. */
      sinceMs?: number;
      /** `--event`, each time given (gate): only these events are replayed. */
      events: string[];
      /**
       * `--versioning` (dev): the worker's `advanced.temporal.versioning`, in place of the
       * module's. @default the module's (else `'auto'`)
       */
      versioning?: 'auto' | 'deployments' | 'off';
      /** `--key` (audit-export): the Ed25519 private key (PEM file) the log is signed with. */
      key?: string;
      /** `--pub` (audit-verify): the Ed25519 public key (PEM file) the log is checked with. */
      pub?: string;
      /** `--out` (audit-export): the file the log is written to. @default stdout */
      out?: string;
      /** `--content` (audit-export): inputs, outputs and texts in the log, beside their digests. */
      content: boolean;
      /** `--query` (audit-export): a visibility query listing the sessions to export. */
      query?: string;
      /** `--session` (audit-verify): compare the log with this session's history on the server. */
      session?: string;
      /** `--history` (audit-verify): compare the log with this history file. */
      history?: string;
    };

/** A parsed command (not help), with the time its waits end (`--timeout` from its start). */
export type CommandArgs = Extract<ParsedArgs, { kind: 'command' }> & { deadline?: number };

/** Where commands write. */
export interface CliOutput {
  /** Results (stdout). */
  out: (text: string) => void;
  /** Progress and notes (stderr). */
  err: (text: string) => void;
}
