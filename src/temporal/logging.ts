/**
 * The SDK's logging: what Temporal's runtime logs (worker, activity and workflow lines, the
 * core's own) goes to the agent's `advanced.logger`, or to stderr, one line per entry, at
 * the agent's level (`advanced.logLevel`, else `DURABLE_AGENT_LOG_LEVEL`, else `WARN`).
 * Stacks and the full metadata only at `DEBUG` and `TRACE`.
 *
 * The Temporal runtime (and so its logger) is one per process: the worker installs a
 * {@link RoutingLogger} once, and each worker registers a {@link LogSink} for its task
 * queues. A line whose metadata names a task queue (every worker, activity and workflow
 * line does) goes to that worker's sink; others (the core's) to the newest sink.
 *
 * No Temporal runtime import (types only): options, the client and unit tests load it freely.
 *
 * @module
 */
import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';
import { ConfigError } from '../common/errors.js';
import { sessionIdOfWorkflowId } from '../common/workflow-io.js';
import { cutPrefix } from '../common/text.js';

/**
 * A logger the SDK can write to: `console`, winston, a pino child wrapped as
 * `(message, meta) => pino.warn(meta, message)`, or a Temporal `Logger` (which has these
 * four methods). Each call is one entry: `message` is one line (no stack), `meta` plain
 * data (strings, numbers, booleans), a `stack` key only at `DEBUG`/`TRACE`.
 */
export interface AgentLogger {
  /** Write a `DEBUG` or `TRACE` entry. */
  debug(message: string, meta?: Record<string, unknown>): void;
  /** Write an `INFO` entry. */
  info(message: string, meta?: Record<string, unknown>): void;
  /** Write a `WARN` entry. */
  warn(message: string, meta?: Record<string, unknown>): void;
  /** Write an `ERROR` entry. */
  error(message: string, meta?: Record<string, unknown>): void;
}

/** Levels, least severe first. `TRACE` and `DEBUG` entries go to `logger.debug`. */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

/** A log level; case does not matter where it is read from text (the variable). */
export type AgentLogLevel = (typeof LOG_LEVELS)[number];

/** The level when neither `advanced.logLevel` nor `DURABLE_AGENT_LOG_LEVEL` says. */
const DEFAULT_LOG_LEVEL: AgentLogLevel = 'WARN';

/** The environment variable of the level. */
export const LOG_LEVEL_VARIABLE = 'DURABLE_AGENT_LOG_LEVEL';

/** `value` as a level, or undefined when it is none (any case accepted). */
export function parseLogLevel(value: unknown): AgentLogLevel | undefined {
  if (typeof value !== 'string') return undefined;
  const upper = value.trim().toUpperCase();
  return (LOG_LEVELS as readonly string[]).includes(upper) ? (upper as AgentLogLevel) : undefined;
}

/**
 * The level in force: `given` (`advanced.logLevel`), else `DURABLE_AGENT_LOG_LEVEL` in
 * `env`, else `fallback`.
 * @throws {ConfigError} when the variable is set to something that is not a level.
 */
export function resolveLogLevel(
  given: AgentLogLevel | undefined,
  env: NodeJS.ProcessEnv = process.env,
  fallback: AgentLogLevel = DEFAULT_LOG_LEVEL,
): AgentLogLevel {
  if (given !== undefined) return parseLogLevel(given) ?? fallback;
  const raw = env[LOG_LEVEL_VARIABLE];
  if (raw === undefined || raw.trim() === '') return fallback;
  const level = parseLogLevel(raw);
  if (!level) {
    throw new ConfigError(
      `${LOG_LEVEL_VARIABLE} must be one of ${LOG_LEVELS.join(', ')} (any case), got '${raw}'`,
    );
  }
  return level;
}

/** Whether the worker installs Temporal's process-wide runtime (`advanced.temporal.runtime`). */
export type RuntimeInstall = 'if-absent' | 'never';

/** The environment variable of {@link RuntimeInstall}, for applications that set it once. */
const RUNTIME_VARIABLE = 'DURABLE_AGENT_TEMPORAL_RUNTIME';

/**
 * Whether to install Temporal's runtime: `given` (`advanced.temporal.runtime`), else
 * `DURABLE_AGENT_TEMPORAL_RUNTIME` in `env`, else `'if-absent'`: a worker claims the process's
 * one runtime either way (Temporal creates its default one on first use, and that one too
 * refuses a later `Runtime.install`), so with none installed it is the quiet one (issue 33).
 * @throws {ConfigError} when the variable is set to something else than `if-absent` or `never`.
 */
export function resolveRuntimeInstall(
  given: RuntimeInstall | undefined,
  env: NodeJS.ProcessEnv = process.env,
): RuntimeInstall {
  if (given !== undefined) return given;
  const raw = env[RUNTIME_VARIABLE]?.trim();
  if (raw === undefined || raw === '') return 'if-absent';
  if (raw === 'if-absent' || raw === 'never') return raw;
  throw new ConfigError(`${RUNTIME_VARIABLE} must be 'if-absent' or 'never', got '${raw}'`);
}

/** Whether an entry at `level` shows at `threshold`. */
export function shows(level: string, threshold: AgentLogLevel): boolean {
  const at = LOG_LEVELS.indexOf(level as AgentLogLevel);
  return at >= LOG_LEVELS.indexOf(threshold);
}

/** Where one worker's lines go. */
interface LogSink {
  /** The task queues of the worker's lines. */
  taskQueues: readonly string[];
  /** The logger, or stderr when undefined. */
  logger: AgentLogger | undefined;
  level: AgentLogLevel;
}

/** One entry, made fit for one line. */
interface FormattedEntry {
  /** The message, the error's name and message after it, on one line. */
  message: string;
  /** Plain data: the context (session, activity, attempt, ...) and the rest of the meta. */
  meta: Record<string, unknown>;
  /** Stacks of the entry's error(s), for `DEBUG`/`TRACE` only. */
  stack: string | undefined;
  /** Keys of `meta` holding an error already in `message`. */
  errorKeys: readonly string[];
}

/** Meta keys that say nothing to a reader of one line (kept at DEBUG). */
const NOISE_KEYS = new Set([
  'sdkComponent',
  'taskToken',
  'workflowRunId',
  'runId',
  'workflowType',
  'isLocal',
  'activityId',
  'namespace',
  'taskQueue',
  'durationMs',
]);

/** An error-like value (Error, SerializedError, ApplicationFailure) in one line. */
function errorLine(value: unknown): string | undefined {
  if (value instanceof Error || isErrorLike(value)) {
    const e = value as { name?: unknown; message?: unknown; type?: unknown };
    // ApplicationFailure: its `type` is the SDK error's class name.
    const name =
      typeof e.type === 'string' && e.type !== '' && e.name === 'ApplicationFailure'
        ? e.type
        : String(e.name ?? 'Error');
    return oneLine(`${name}: ${String(e.message ?? '')}`);
  }
  return undefined;
}

function isErrorLike(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string' &&
    typeof (value as { name?: unknown }).name === 'string'
  );
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 2_000 ? `${cutPrefix(line, 2_000)}…` : line;
}

/** An entry's message, context and error as one line of text plus plain meta. */
export function formatEntry(
  message: string,
  meta: LogMetadata | undefined,
  level: AgentLogLevel,
): FormattedEntry {
  const verbose = level === 'DEBUG' || level === 'TRACE';
  const out: Record<string, unknown> = {};
  const stacks: string[] = [];
  const errors: string[] = [];
  const errorKeys: string[] = [];
  for (const [key, value] of Object.entries(meta ?? {})) {
    if (value === undefined) continue;
    const asError = errorLine(value);
    if (asError !== undefined) {
      errors.push(asError);
      errorKeys.push(key);
      out[key] = asError;
      const stack = (value as { stack?: unknown }).stack;
      if (typeof stack === 'string' && stack !== '') stacks.push(stack);
      continue;
    }
    if (!verbose && NOISE_KEYS.has(key)) continue;
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) {
      out[key] = typeof value === 'string' ? oneLine(value) : value;
    } else if (typeof value === 'bigint') {
      out[key] = String(value);
    } else {
      out[key] = oneLine(safeJson(value));
    }
  }
  const workflowId = typeof out.workflowId === 'string' ? out.workflowId : undefined;
  const sessionId = workflowId === undefined ? undefined : sessionIdOfWorkflowId(workflowId);
  if (sessionId !== undefined && out.sessionId === undefined) {
    out.sessionId = sessionId;
    if (!verbose) delete out.workflowId;
  }
  const stack = verbose && stacks.length > 0 ? stacks.join('\ncaused by: ') : undefined;
  if (stack !== undefined) out.stack = stack;
  const text = oneLine(message);
  return {
    message: errors.length > 0 ? `${text}: ${errors.join('; ')}` : text,
    meta: out,
    stack,
    errorKeys,
  };
}

/** The line stderr gets: `[durable-agent-sdk WARN] message (k=v, ...)`, then the stack. */
export function stderrLine(level: string, entry: FormattedEntry): string {
  const context = Object.entries(entry.meta)
    .filter(([key]) => key !== 'stack' && !entry.errorKeys.includes(key))
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(', ');
  const line = `[durable-agent-sdk ${level}] ${entry.message}${context ? ` (${context})` : ''}`;
  return entry.stack ? `${line}\n${entry.stack}` : line;
}

function safeJson(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (_key, v: unknown) =>
        v instanceof Error ? `${v.name}: ${v.message}` : typeof v === 'bigint' ? String(v) : v,
      ) ?? ''
    );
  } catch {
    return String(value);
  }
}

/** Lines of the Temporal runtime that say nothing a user of this SDK can act on. */
const QUIET_LOG_LINES = [
  // The cleanup worker runs activities only, on purpose.
  'No workflows registered',
  // The time-skipping test server does not advertise this capability; no hook reads
  // heartbeat details of a failed activity.
  'the server did not advertise the activity_failure_include_heartbeat capability',
  // The hook test env's killWorkerAt: the dropped result of a worker it killed.
  'This worker was killed by the test',
];

/**
 * Temporal's time-skipping test server refuses a workflow's request to cancel an activity
 * whose completion it has just buffered (`ACTIVITY_UNKNOWN`) and then never hands the run
 * another workflow task, so the session stops there. A real server accepts the request.
 */
const ACTIVITY_UNKNOWN_HINT =
  'The server refused to cancel an activity that had just completed ' +
  "(ACTIVITY_UNKNOWN). Temporal's time-skipping test server does this when an abort races a " +
  "hook or tool finishing, and the session then stops. Run such a test with server: 'dev' " +
  '(createHookTestEnv), or deliver the abort with env.abortAt(), which waits for it to land.';

/**
 * The Temporal runtime's logger: routes each entry to the sink of its task queue (see the
 * module), filters it by the sink's level, and writes it as one line.
 */
export class RoutingLogger implements TemporalLogger {
  readonly #sinks: LogSink[] = [];
  readonly #fallback: LogSink;
  readonly #write: (line: string) => void;

  /**
   * @param fallbackLevel the level of lines no sink takes (no worker registered).
   * @param write where stderr lines go. @default `process.stderr`
   */
  constructor(
    fallbackLevel: AgentLogLevel,
    write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ) {
    this.#fallback = { taskQueues: [], logger: undefined, level: fallbackLevel };
    this.#write = write;
  }

  /** Route the lines of `sink.taskQueues` to `sink`. @returns a function that removes it. */
  addSink(sink: LogSink): () => void {
    this.#sinks.push(sink);
    return () => {
      const at = this.#sinks.indexOf(sink);
      if (at >= 0) this.#sinks.splice(at, 1);
    };
  }

  #sinkOf(meta: LogMetadata | undefined): LogSink {
    const queue = meta?.taskQueue;
    if (typeof queue === 'string') {
      const owner = this.#sinks.find((s) => s.taskQueues.includes(queue));
      if (owner) return owner;
    }
    return this.#sinks.at(-1) ?? this.#fallback;
  }

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const sink = this.#sinkOf(meta);
    if (!shows(level, sink.level)) return;
    const entry = formatEntry(message, meta, sink.level);
    const all = `${entry.message} ${safeJson(entry.meta)}`;
    if (QUIET_LOG_LINES.some((line) => all.includes(line))) return;
    this.#emit(sink, level, entry);
    if (all.includes('ACTIVITY_UNKNOWN')) {
      this.#emit(sink, 'WARN', {
        message: ACTIVITY_UNKNOWN_HINT,
        meta: {},
        stack: undefined,
        errorKeys: [],
      });
    }
  }

  #emit(sink: LogSink, level: LogLevel, entry: FormattedEntry): void {
    if (!sink.logger) {
      this.#write(stderrLine(level, entry));
      return;
    }
    const method =
      level === 'ERROR' ? 'error' : level === 'WARN' ? 'warn' : level === 'INFO' ? 'info' : 'debug';
    try {
      sink.logger[method](entry.message, entry.meta);
    } catch {
      // A logger that throws must not take the worker down.
    }
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

/** Whether `value` has the four methods of {@link AgentLogger}. */
export function isAgentLogger(value: unknown): value is AgentLogger {
  return (
    typeof value === 'object' &&
    value !== null &&
    ['debug', 'info', 'warn', 'error'].every(
      (m) => typeof (value as Record<string, unknown>)[m] === 'function',
    )
  );
}
