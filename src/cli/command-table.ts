/**
 * The command table: each command of `durable-agent` by name, with what the parser checks
 * (its positionals and the options it takes), its help (usage line, summary, description)
 * and how it runs. The parser, the help text and the entry point read it; a command's code
 * (`commands/<command>.ts`) is loaded only when it runs, so help and usage errors answer
 * without loading Temporal's client.
 *
 * @module
 */
import { SESSION_LIST_STATUSES } from '../client/session-status.js';
import {
  AUDIT_TIMEOUT_MS,
  CODEC_TOKEN_VARIABLE,
  DEFAULT_CODEC_PORT,
  DEFAULT_CORS_ORIGINS,
  DEFAULT_UI_PORT,
  GATE_TIMEOUT_MS,
  KEYS_VARIABLE,
  UI_TOKEN_VARIABLE,
} from './cli-defaults.js';
import type { CliOutput, CommandArgs } from './command-args.js';

/** A command: writes its result to `io` and returns the exit code, or throws a `CliError`. */
type CommandRun = (args: CommandArgs, io: CliOutput) => Promise<number>;

/** One command of the table. */
interface CommandSpec {
  /** Its positionals, in order, as the usage names them (all required). */
  positionals: readonly string[];
  /** Positionals that may follow the required ones, in order. @default none */
  optionalPositionals?: readonly string[];
  /** The options it takes besides the global ones. */
  options: readonly string[];
  /** Its usage line. */
  usage: string;
  /** One line for the command list of `durable-agent --help`. */
  summary: string;
  /** What `durable-agent <command> --help` says of it. */
  description: string;
  /** Loads the command's module: its code and imports are read only when it runs. */
  load: () => Promise<CommandRun>;
}

/** The commands, in the order `durable-agent --help` lists them. */
export const COMMANDS = {
  sessions: {
    positionals: [],
    options: ['limit', 'json', 'timeout', 'status', 'agent'],
    usage: 'durable-agent sessions [--status S] [--agent NAME] [--limit N] [--json]',
    summary: 'list sessions, newest first',
    description:
      'Lists sessions (workflows of type sessionWorkflow) with their status, start and close\n' +
      "time, and the agent and state of each. STATE is the session's own status (search\n" +
      'attribute DurableAgentStatus) while its workflow runs, closed once it completed, else how\n' +
      'Temporal ended it (terminated, timed_out, failed, canceled, continued_as_new): a\n' +
      'terminated or reset workflow keeps its last DurableAgentStatus. --status S lists only\n' +
      `sessions in state S (${SESSION_LIST_STATUSES.join(', ')}), --agent NAME\n` +
      'only those of that agent (both need the search attributes registered: the README says\n' +
      'how). --limit N shows at most N (default 50); --json prints JSON.',
    load: () => import('./commands/sessions.js').then((m) => m.sessions),
  },
  inspect: {
    positionals: ['sessionId | history.json'],
    options: ['json', 'timeout'],
    usage: 'durable-agent inspect <sessionId | history.json> [--json]',
    summary: "a session's hook timeline, from its history",
    description:
      "Rebuilds a session's hook timeline from its Temporal history (open or closed): one row\n" +
      'per hook dispatch with its decision, reason and duration, the SessionEnd marker and the\n' +
      "final status; then each callback's decision, reason, time and edits (as diffs), and each\n" +
      "tool call's permission (the policy's answer, who approved or denied with what edited\n" +
      'input, the wait, the deadline) and result. A Task call shows its sub-agent, whose own\n' +
      'timeline follows, indented under it (read from the server, up to 4 levels; --json puts\n' +
      'it under `subagents`, by tool use id). Accepts a history file too. --json prints the\n' +
      'timeline as JSON (shape in src/cli/README.md).',
    load: () => import('./commands/inspect.js').then((m) => m.inspect),
  },
  replay: {
    positionals: ['sessionId | history.json'],
    options: ['timeout'],
    usage: 'durable-agent replay <sessionId | history.json>',
    summary: 'replay a history against the current workflow code',
    description:
      'Replays a session history (fetched by session id, or a file written by historyToJSON or\n' +
      "'temporal workflow show --output json') against the current workflow code and prints\n" +
      "'deterministic: yes' (exit 0) or 'deterministic: NO' with the nondeterminism (exit 1).",
    load: () => import('./commands/replay.js').then((m) => m.replay),
  },
  pending: {
    positionals: ['sessionId'],
    options: ['json', 'timeout'],
    usage: 'durable-agent pending <sessionId> [--json]',
    summary: 'permission requests waiting for a person',
    description:
      'Lists the permission requests of a session that wait for a person (ask), its running\n' +
      "sub-agents' included (a PATH column, e.g. main/writer, names the sub-agent that asks).\n" +
      "DIGEST is the first 12 hex digits of the call's approval digest (--json: all 64), which\n" +
      'approve and deny take as --digest to bind the answer to the call shown.\n' +
      "The list comes from the session's worker: with no worker polling the session's task\n" +
      'queue, it says so (naming the queue) instead of waiting; with one that does not answer,\n' +
      'it gives up after --timeout.',
    load: () => import('./commands/pending.js').then((m) => m.pending),
  },
  approve: {
    positionals: ['sessionId', 'requestId'],
    options: ['input', 'digest', 'wait', 'timeout', 'identity'],
    usage:
      'durable-agent approve <sessionId> <requestId> [--input JSON] [--digest HEX] [--wait] [--identity NAME]',
    summary: 'allow a pending permission request',
    description:
      'Allows a pending permission request; the tool runs once. --input JSON replaces the\n' +
      "tool's input (a JSON object). The session's worker applies it: when no worker polls the\n" +
      "session's task queue or none answers within --timeout, nothing is sent and approve exits 1\n" +
      'naming the queue. --wait sends it anyway and waits up to --timeout for a worker to apply\n' +
      "it; exit 0 once applied. --identity NAME: who approves, recorded in the session's history\n" +
      '(inspect shows it; default <user>@<host>). A request answered already: the same answer\n' +
      'again exits 0 saying by whom and when it was applied; another answer exits 1. A\n' +
      "sub-agent's request (as pending lists it) is answered in the sub-agent's session; the\n" +
      'worker checks and --wait then apply to it. The answer is bound to the call: it names\n' +
      "the request's approval digest (--digest HEX as pending showed it, else the digest of the\n" +
      "request as approve reads it; none with --wait), and a digest that is not the request's\n" +
      '(the call changed since it was shown) exits 1 naming what changed; nothing is decided.',
    load: () => import('./commands/decide.js').then((m) => m.decide),
  },
  deny: {
    positionals: ['sessionId', 'requestId'],
    options: ['message', 'interrupt', 'digest', 'wait', 'timeout', 'identity'],
    usage:
      'durable-agent deny <sessionId> <requestId> [--message M] [--interrupt] [--digest HEX] [--wait] [--identity NAME]',
    summary: 'deny a pending permission request',
    description:
      'Denies a pending permission request; the model gets --message as the tool error.\n' +
      '--interrupt also stops the running prompt. With no worker, as approve: nothing is sent\n' +
      'unless --wait. --identity NAME and --digest HEX as for approve.',
    load: () => import('./commands/decide.js').then((m) => m.decide),
  },
  dev: {
    positionals: ['module.ts|js'],
    options: ['ui', 'db', 'versioning'],
    usage:
      'durable-agent dev <module.ts|js> [--ui] [--db FILE] [--versioning auto|deployments|off]',
    summary: 'embedded dev server and a worker for an agent module',
    description:
      'Starts the embedded Temporal dev server (--ui adds the Web UI, --db FILE keeps its state)\n' +
      "and a worker for the agent module's default export (its AgentOptions), until Ctrl-C.\n" +
      "--versioning auto|deployments|off sets the worker's advanced.temporal.versioning (default:\n" +
      "the module's, else auto: Worker Deployments, which the embedded server has); clients of\n" +
      'the agent must come to the same one.',
    load: () => import('./commands/dev.js').then((m) => m.dev),
  },
  golden: {
    positionals: ['module.ts|js', 'recordings'],
    options: ['json'],
    usage: 'durable-agent golden <module.ts|js> <recording.json | history.json | folder> [--json]',
    summary: "check golden sessions against an agent module's current hooks",
    description:
      "Runs the agent module's current hooks on every dispatch of the golden session recordings\n" +
      '(a file, or every .json in a folder; record them with env.recordGolden) and prints each\n' +
      'decision that changed, before and after. Exit 0: none changed; 1: some did; 2: bad input\n' +
      '(a missing or malformed recording, a module that does not load) or usage. No server needed.\n' +
      'A session history file (from writeHistoryFile or temporal workflow show --output json) is\n' +
      'read as a recording of its dispatches; an encrypted one is decrypted with the key ring.',
    load: () => import('./commands/golden.js').then((m) => m.golden),
  },
  gate: {
    positionals: ['module.ts|js'],
    options: ['version', 'since', 'limit', 'event', 'json', 'timeout'],
    usage:
      'durable-agent gate <module.ts|js> [--version V] [--since 24h] [--limit N] [--event E]... [--json]',
    summary: "deploy gate: replay recent sessions' hook inputs through a new definition",
    description:
      "Deploy gate. Lists recent sessions of the agent named by the module's default export\n" +
      "(its name) at the running version (--version V, default: the most recent session's),\n" +
      "fetches every run's history, and runs each recorded hook dispatch's input through the\n" +
      "module's callbacks for that event, as a worker runs them; prints per session every\n" +
      'decision that would flip (dispatch, event, tool, before, after), then a summary.\n' +
      '--since 24h: only sessions started since; --limit N: at most N sessions (default 50, most\n' +
      'recent first); --event E (repeatable): only those events; --json: the report as JSON.\n' +
      'Tools and the model never run; callbacks and permission functions are called for real\n' +
      `(their side effects happen). Encrypted sessions are read with ${KEYS_VARIABLE}.\n` +
      'Exit 0: nothing flips; 1: something flips; 2: bad input (a module that does not load, no\n' +
      'sessions, a server that does not answer, a history that does not decrypt) or usage.\n' +
      `--timeout bounds it all (default ${GATE_TIMEOUT_MS / 1000}s).`,
    load: () => import('./commands/gate.js').then((m) => m.gate),
  },
  'codec-server': {
    positionals: [],
    options: ['port', 'host', 'cors-origin'],
    usage: 'durable-agent codec-server [--port N] [--host H] [--cors-origin URL]...',
    summary: 'decrypt sessions for the Temporal Web UI (remote codec endpoint)',
    description:
      "Serves Temporal's remote codec protocol (POST /decode, /encode) with the key ring of\n" +
      `${KEYS_VARIABLE}, so the Web UI (--ui-codec-endpoint, or the UI's codec server\n` +
      'setting) and `temporal workflow show --codec-endpoint URL --codec-auth "Bearer <token>"`\n' +
      `show encrypted sessions decrypted. Every request needs Authorization: Bearer $${CODEC_TOKEN_VARIABLE}.\n` +
      `Serves the namespace of --namespace only; offloaded payloads are read from --payloads.\n` +
      `--port (default ${DEFAULT_CODEC_PORT}), --host (default 127.0.0.1); --cors-origin URL, repeatable: the UI\n` +
      `origins browsers may call from (default: ${DEFAULT_CORS_ORIGINS.join(', ')}). Runs until Ctrl-C.`,
    load: () => import('./commands/codec-server.js').then((m) => m.codecServer),
  },
  ui: {
    positionals: [],
    options: ['port', 'host', 'identity', 'limit', 'timeout', 'task-queue'],
    usage: 'durable-agent ui [--port N] [--host H] [--task-queue Q] [--identity NAME] [--limit N]',
    summary: 'session page: sessions by status, hook decisions, approvals inbox',
    description:
      'Serves the session page, a small web app: the sessions by status (awaiting approval, running,\n' +
      "idle, closed), each session as turns, hook dispatches, each callback's decision and reason\n" +
      'and the tools, with diffs of what hooks and people changed (what inspect shows), and an\n' +
      'inbox of the permission requests waiting for a person, who approves (optionally with an\n' +
      'edited JSON input) or denies with a message: the same Update as approve/deny, recorded as\n' +
      `ui:<their name>, else --identity (default ui:<user>@<host>). Prints its address with the\n` +
      `token: every page needs it (?token= once, then a cookie; or Authorization: Bearer). The token\n` +
      `is $${UI_TOKEN_VARIABLE}, else a random one. --port (default ${DEFAULT_UI_PORT}), --host (default 127.0.0.1:\n` +
      'loopback; plain HTTP), --limit N sessions listed (default 50), --task-queue Q only the sessions\n' +
      "of that task queue (one agent's), --timeout T per page (default 10s).\n" +
      `Encrypted sessions are read with ${KEYS_VARIABLE}, offloaded payloads from --payloads.\n` +
      'Runs until Ctrl-C.',
    load: () => import('./commands/ui.js').then((m) => m.sessionUi),
  },
  'audit-export': {
    positionals: [],
    optionalPositionals: ['sessionId | history.json'],
    options: ['key', 'out', 'content', 'query', 'timeout'],
    usage:
      'durable-agent audit-export <sessionId | history.json> [--query Q] --key private.pem [--out file] [--content]',
    summary: 'a signed log of every decision of a session, from its history',
    description:
      'Writes a JSON Lines audit log of a session (every run, oldest first), of a history file, or\n' +
      'of every session a visibility query lists (--query Q): a header, one entry per decision\n' +
      "(each hook callback's decision, reason and diffs, permission answers, approvals with who,\n" +
      'when and the digest, tool runs with sha256 of input and output, model steps with usage,\n' +
      "versions), each carrying the previous entry's hash, and an Ed25519 signature over the last\n" +
      'hash with --key (a PEM private key: openssl genpkey -algorithm ed25519). Inputs, outputs\n' +
      'and texts appear as digests only; --content adds them. For an encrypted session reasons,\n' +
      'messages and diffs are digests too, unless --content. --out FILE (default stdout).\n' +
      'Sub-agents are referenced by session id: export them too. docs/audit.md describes the log.\n' +
      `--timeout bounds the reading (default ${AUDIT_TIMEOUT_MS / 1000}s).`,
    load: () => import('./commands/audit-export.js').then((m) => m.auditExport),
  },
  'audit-verify': {
    positionals: ['log.jsonl'],
    options: ['pub', 'session', 'history', 'timeout'],
    usage:
      'durable-agent audit-verify <log.jsonl> --pub public.pem [--session id | --history file]',
    summary: "check an audit log's chain, signature and the history it came from",
    description:
      "Checks an audit log offline: each entry's hash and link to the one before, and the\n" +
      'signature with --pub (the PEM public key of the signer). With --session ID (from the\n' +
      'server) or --history FILE it also makes the entries again from the recorded history and\n' +
      'compares them entry for entry. The first problem is named: the entry (seq, kind, line)\n' +
      'that was changed, removed, moved or is not in the history. Exit 0: the log holds; 1: it\n' +
      'does not; 2: bad input (no key, a key that is not Ed25519, a malformed line) or usage.\n' +
      `--timeout bounds the reading of the history (default ${AUDIT_TIMEOUT_MS / 1000}s).`,
    load: () => import('./commands/audit-verify.js').then((m) => m.auditVerify),
  },
  init: {
    positionals: [],
    optionalPositionals: ['dir'],
    options: ['force'],
    usage: 'durable-agent init [dir] [--force]',
    summary: 'scaffold a project: agent, worker, client, hook test',
    description:
      'Writes a project into dir (default: the current folder): package.json (durable-agent-sdk\n' +
      'at this version, its peers zod and ai, tsx, typescript and vitest; scripts start, worker,\n' +
      'client, test), tsconfig.json, src/agent.ts (a PreToolUse hook that blocks rm -rf and a\n' +
      'PostToolUse audit hook), src/worker.ts, src/client.ts, src/start.ts, test/hooks.test.ts\n' +
      '(createHookTestEnv), .gitignore and README.md. The agent runs a scripted model unless\n' +
      'OPENAI_API_KEY is set, so the project runs offline. A folder that is not empty is refused,\n' +
      'naming the files that would be overwritten; --force writes anyway. Nothing is installed:\n' +
      'run npm install in dir.',
    load: () => import('./commands/init.js').then((m) => m.init),
  },
} as const satisfies Record<string, CommandSpec>;

/** A command's name. */
export type CommandName = keyof typeof COMMANDS;

/** Whether `name` is a command's. */
export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}
