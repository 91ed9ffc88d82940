/**
 * Every default of the SDK, in one place. Workflow-safe.
 *
 * @module
 */
export const DEFAULTS = {
  /** Budget shared by all callbacks of one event, ms (contract §4.5). */
  hookTimeoutMs: 600_000,
  /** Budget of SessionEnd's callbacks, ms (contract §4.5). */
  sessionEndHookTimeoutMs: 3_000,
  /**
   * How long a session holds its turn for a move to another version (`session.upgrade()`)
   * between the client's `begin` and its `finish` or `cancel`, ms: a client that died in
   * between holds the session no longer than this.
   */
  upgradeHoldMs: 30_000,
  /** Most model steps in one `send()`. */
  maxTurns: 50,
  /** Agent name in the worker-side registry (and the default task queue's last part). */
  agentName: 'default',
  /** First part of the default task queue, `durable-agent.<name>` (see `defaultTaskQueueOf`). */
  taskQueuePrefix: 'durable-agent',
  /** Temporal namespace. */
  namespace: 'default',
  /**
   * How often a running dispatch heartbeats, ms. With the worker's heartbeat throttle at the
   * same value this bounds how long an `abort()` takes to reach a callback's `abortSignal`.
   */
  heartbeatIntervalMs: 25,
  /** Heartbeat timeout of a hook dispatch: how soon a dead worker is noticed, ms. */
  dispatchHeartbeatTimeoutMs: 5_000,
  /**
   * How long a session's next workflow task waits for the worker that ran the last one
   * before any worker may take it, ms (Temporal's default: 10000).
   */
  stickyQueueScheduleToStartTimeoutMs: 1_000,
  /** Workflow tasks one worker holds at once: Temporal's default. */
  maxConcurrentWorkflowTaskExecutions: 40,
  /**
   * Workflow task timeout of a session, ms: Temporal's default. 2000 brings recovery after a
   * worker death down to about 2 s, but on a starved machine (load 29 on 2 cores here) tasks
   * of a 100-session burst timed out again and again and a send failed: opt in where workers
   * are not starved (`advanced.temporal.workflowTaskTimeoutMs`).
   */
  workflowTaskTimeoutMs: 10_000,
  /** Heartbeat timeout of the activity that waits for a stuck callback to settle, ms. */
  cleanupHeartbeatTimeoutMs: 5_000,
  /** How long a cleanup wait may go unpicked before its worker counts as gone, ms. */
  cleanupScheduleToStartTimeoutMs: 10_000,
  /** Extra time the server gives a dispatch beyond its budget before timing it out, ms. */
  dispatchBackstopMarginMs: 5_000,
  /**
   * Heartbeat timeout of a model step (it heartbeats every 250 ms), ms: how soon a step whose
   * worker died is retried on another.
   */
  modelHeartbeatTimeoutMs: 30_000,
  /** Heartbeat timeout of a tool's execution, ms: how soon a lost worker's call ends. */
  toolHeartbeatTimeoutMs: 10_000,
  /** Timeout of one model step, ms. */
  modelTimeoutMs: 120_000,
  /** Time budget of one tool execution, ms. */
  toolTimeoutMs: 600_000,
  /** How long an `ask` waits for a person before it turns into a deny, ms (24 h). */
  permissionTimeoutMs: 86_400_000,
  /** Largest tool output the model sees, bytes; more is cut with a marker. */
  maxToolOutputBytes: 65_536,
  /** What a failed tool hook does: an error result for that call (the seed's contract). */
  toolHookErrors: 'tool-error',
  /** Most tokens of conversation the model gets per step (JSON characters / 4). */
  maxContextTokens: 100_000,
  /** Payloads over this many bytes go to the payload store; history keeps a reference. */
  offloadPayloadBytes: 262_144,
  /** Deepest level of sub-agents (`advanced.subagents.maxDepth`); 1: sub-agents spawn none. */
  subagentsMaxDepth: 1,
  /** Sub-agents of one session running at once (`advanced.subagents.maxConcurrent`). */
  subagentsMaxConcurrent: 4,
  /** Time budget of one `Task` call, from the sub-agent's start, ms (1 h). */
  subagentsTimeoutMs: 3_600_000,
  /** Folder of the embedded payload store, relative to the working directory. */
  payloadDir: '.durable-agent/payloads',
} as const;

/** Largest timeout JavaScript timers honour: 2^31 - 1 ms (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2_147_483_647;
