/**
 * Budgets shared by key: every session of an agent, or of a tenant, spends from one durable
 * budget (an entity workflow per key, `workflows/budget-workflow.ts`). A session does not ask
 * it at every step: it takes a lease of part of what is left and spends it locally, going
 * back when the lease runs out, when its window ends, and when the session ends. Near the cap
 * a lease is exactly the step it is asked for, and goes back when the prompt ends.
 *
 * The pure rules of both sides are here: the budget's ledger (grant, return, window) and the
 * session's lease (fits, charge). Workflow-safe (no Node imports).
 *
 * @module
 */
import {
  BUDGET_NAMES,
  round9,
  type BudgetCaps,
  type BudgetName,
  type BudgetRaise,
} from './budgets.js';

/**
 * The window a shared budget counts in: a UTC calendar `'hour'`, `'day'` or `'month'`, or a
 * number of milliseconds (windows from the epoch). Absent: one budget for good.
 */
export type BudgetWindow = 'hour' | 'day' | 'month' | number;

/**
 * One budget shared by key (`advanced.budgets.shared`): caps (as a session's) that every
 * session with the same key spends from together.
 */
export interface SharedBudgetOptions extends BudgetCaps {
  /**
   * Who shares it: `'agent'`, every session of this agent (by its `name`); `'tenant'`, every
   * session started with the same `tenant` (`createSession({ tenant })`), whatever its agent
   * (the agents' own caps each hold against the tenant's common spend).
   */
  scope: 'agent' | 'tenant';
  /** The window it counts in. @default none (one budget for good) */
  window?: BudgetWindow;
}

/** What a session's workflow input carries of one shared budget. */
export interface SharedBudgetSpec {
  /** The budget's key: `agent:<name>` or `tenant:<tenant>`, then `:<window>` when windowed. */
  key: string;
  /** Its caps, as the session's agent gives them. */
  caps: BudgetCaps;
  /** Its window. */
  window?: BudgetWindow;
}

/** An amount of each budget (zero when not counted). */
export type BudgetAmounts = Record<BudgetName, number>;

/** A lease a session holds: what it was granted and what it spent of it. */
export interface HeldLease {
  /** The lease id: `<sessionId>/<n>`, also the id of the Update that granted it. */
  id: string;
  /** Granted of each capped budget. */
  granted: BudgetCaps;
  /** Spent of it so far (every budget counted, capped or not). */
  spent: BudgetAmounts;
  /** The end of the window it was granted in, ms since the epoch (absent: no window). */
  windowEnd?: number;
  /** The budget was near its cap: give the lease back when the prompt ends. */
  returnAtIdle: boolean;
  /** What was left of each cap besides this lease when it was granted. */
  left?: BudgetCaps;
  /** The caps the budget held when it granted it (the agents' and raised ones). */
  caps?: BudgetCaps;
}

/** A request to a shared budget: give back a lease, take a new one, or both in one Update. */
export interface LeaseRequest {
  /** The budget's key. */
  key: string;
  /** The asking session. */
  sessionId: string;
  /** The new lease's id, also the Update's id (a retried request is answered once). */
  leaseId: string;
  /** The caps the asking session's agent gives the budget. */
  caps: BudgetCaps;
  /** Its window. */
  window?: BudgetWindow;
  /** Least the lease must hold (the step or calls about to start); absent: return only. */
  need?: BudgetCaps;
  /** What the session would like (a few steps' worth), granted when far from the cap. */
  ask?: BudgetCaps;
  /** A lease given back, with what its session spent of it. */
  returning?: { id: string; spent: BudgetAmounts };
}

/** A cap a shared budget refused a lease at: the prompt ends `budget_exceeded` naming it. */
interface SharedBudgetRefusal {
  /** The cap. */
  budget: BudgetName;
  /** Its value. */
  limit: number;
  /** Spent in the window when refused. */
  spent: number;
  /** Held by other sessions' leases then. */
  leased: number;
  /** What the refused lease needed. */
  reserved: number;
}

/** A shared budget's answer to a {@link LeaseRequest}. */
export type LeaseAnswer =
  | {
      granted: BudgetCaps;
      windowEnd?: number;
      returnAtIdle: boolean;
      left?: BudgetCaps;
      caps?: BudgetCaps;
    }
  | { refused: SharedBudgetRefusal }
  | { returned: true };

/** A lease the budget has granted and not had back. */
interface GrantedLease {
  sessionId: string;
  granted: BudgetCaps;
  /** The window it was granted in (its spend counts there). */
  windowStart: number;
}

/** A shared budget's ledger, as its workflow keeps it and carries over continue-as-new. */
export interface SharedBudgetState {
  key: string;
  window?: BudgetWindow;
  /** The current window's start, ms since the epoch (0 without a window). */
  windowStart: number;
  /** Spent in the current window, by leases given back. */
  spent: BudgetAmounts;
  /** Leases out, by id. */
  leases: Record<string, GrantedLease>;
  /** Caps set by raises: they hold over the ones sessions' agents give. */
  raised: BudgetCaps;
  /** Raises, oldest first. */
  raises: BudgetRaise[];
  /** The last windows' spend, newest first (at most {@link KEPT_WINDOWS}). */
  previous: { windowStart: number; spent: BudgetAmounts }[];
  /** Answers to the last requests by lease id: a request retried after a continue-as-new. */
  answered: [string, LeaseAnswer][];
}

/** What a shared budget shows (its `status` query, `agent.sharedBudget(key)`). */
export interface SharedBudgetStatus {
  /** The budget's key (`tenant:acme:day`). */
  key: string;
  /** Its window (absent: one budget for good). */
  window?: BudgetWindow;
  /** The current window's start (ms since the epoch; 0 without a window). */
  windowStart: number;
  /** Spent in it by leases given back. */
  spent: BudgetAmounts;
  /** Held by leases out now. */
  leased: BudgetAmounts;
  /** Leases out now. */
  leases: number;
  /** Caps set by raises. */
  raised: BudgetCaps;
  /** Raises, oldest first, with who raised and when. */
  raises: BudgetRaise[];
  /** The last three windows' spend, newest first. */
  previous: { windowStart: number; spent: BudgetAmounts }[];
}

/** A lease asked far from the cap holds this many steps (or tool calls). */
export const LEASE_STEPS = 8;
/** Far from the cap: at least this many such leases fit in what is left. */
const LEASE_SPREAD = 8;
/** Tool calls a lease asks for at least. */
export const LEASE_TOOL_CALLS = 8;
/** Previous windows a budget shows. */
const KEPT_WINDOWS = 3;
/** Answers kept for requests retried across a continue-as-new. */
const KEPT_ANSWERS = 1000;

/** Zero of each budget. */
export function zeroAmounts(): BudgetAmounts {
  return {
    modelCalls: 0,
    toolCalls: 0,
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    costUsd: 0,
  };
}

/** `into` plus `add`, budget by budget (dollars rounded to 1e-9). */
export function addAmounts(into: BudgetAmounts, add: Partial<BudgetAmounts>): void {
  for (const name of BUDGET_NAMES) {
    const n = add[name] ?? 0;
    into[name] = name === 'costUsd' ? round9(into[name] + n) : into[name] + n;
  }
}

/** The key of a shared budget: `agent:<name>` / `tenant:<tenant>`, then `:<window>`. */
export function sharedBudgetKey(
  shared: SharedBudgetOptions,
  agentName: string,
  tenant: string | undefined,
): string {
  const base = shared.scope === 'agent' ? `agent:${agentName}` : `tenant:${tenant}`;
  if (shared.window === undefined) return base;
  return `${base}:${typeof shared.window === 'number' ? `${shared.window}ms` : shared.window}`;
}

/**
 * The task queue of the shared budgets' workflows of the agent on `taskQueue`: polled by
 * every worker of the agent that shares a budget, unversioned whatever its versioning (a
 * budget's workflow is the package's code, not the agent's, and must not stall when a
 * version retires).
 */
export function sharedBudgetTaskQueue(taskQueue: string): string {
  return `${taskQueue}/budgets`;
}

/** The id of the workflow that keeps the budget of `key`. */
export function sharedBudgetWorkflowId(key: string): string {
  return `durable-agent-budget:${key}`;
}

/** The start of the window `now` falls in (ms since the epoch, UTC); 0 without a window. */
export function windowStartOf(window: BudgetWindow | undefined, now: number): number {
  if (window === undefined) return 0;
  if (typeof window === 'number') return Math.floor(now / window) * window;
  const at = new Date(now);
  switch (window) {
    case 'hour':
      return Math.floor(now / 3_600_000) * 3_600_000;
    case 'day':
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
    case 'month':
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
  }
}

/** The end of the window starting at `start` (exclusive); undefined without a window. */
export function windowEndOf(window: BudgetWindow | undefined, start: number): number | undefined {
  if (window === undefined) return undefined;
  if (typeof window === 'number') return start + window;
  const at = new Date(start);
  switch (window) {
    case 'hour':
      return start + 3_600_000;
    case 'day':
      return start + 86_400_000;
    case 'month':
      return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  }
}

/** A new budget's ledger for `key`. */
export function newSharedBudget(
  key: string,
  window: BudgetWindow | undefined,
  now: number,
): SharedBudgetState {
  return {
    key,
    ...(window !== undefined ? { window } : {}),
    windowStart: windowStartOf(window, now),
    spent: zeroAmounts(),
    leases: {},
    raised: {},
    raises: [],
    previous: [],
    answered: [],
  };
}

/** Move to the window `now` falls in: the spend starts again, the last one is kept to show. */
function roll(state: SharedBudgetState, now: number): void {
  const start = windowStartOf(state.window, now);
  if (start === state.windowStart) return;
  state.previous.unshift({ windowStart: state.windowStart, spent: state.spent });
  state.previous.length = Math.min(state.previous.length, KEPT_WINDOWS);
  state.windowStart = start;
  state.spent = zeroAmounts();
  // A lease of a window no longer shown counts nowhere: forget it (its return adds nothing).
  const kept = new Set([start, ...state.previous.map((w) => w.windowStart)]);
  for (const [id, lease] of Object.entries(state.leases)) {
    if (!kept.has(lease.windowStart)) delete state.leases[id];
  }
}

/** What the leases of the current window hold. */
function leasedOf(state: SharedBudgetState): BudgetAmounts {
  const leased = zeroAmounts();
  for (const lease of Object.values(state.leases)) {
    if (lease.windowStart === state.windowStart) addAmounts(leased, lease.granted);
  }
  return leased;
}

/**
 * Answer one request at `now` (workflow time): take back the lease it returns (its spend
 * counts in the window it was granted in), then grant a new one, or refuse naming the first
 * cap that cannot hold its `need`. The same lease id answers the same, once.
 */
export function applyLease(
  state: SharedBudgetState,
  request: LeaseRequest,
  now: number,
): LeaseAnswer {
  const earlier = state.answered.find(([id]) => id === request.leaseId);
  if (earlier) return earlier[1];
  const answer = answerLease(state, request, now);
  state.answered.push([request.leaseId, answer]);
  if (state.answered.length > KEPT_ANSWERS) state.answered.shift();
  return answer;
}

function answerLease(state: SharedBudgetState, request: LeaseRequest, now: number): LeaseAnswer {
  roll(state, now);
  const back = request.returning;
  const lease = back ? state.leases[back.id] : undefined;
  if (back && lease) {
    delete state.leases[back.id];
    if (lease.windowStart === state.windowStart) addAmounts(state.spent, back.spent);
    else
      addAmounts(
        state.previous.find((w) => w.windowStart === lease.windowStart)?.spent ?? zeroAmounts(),
        back.spent,
      );
  }
  if (!request.need) return { returned: true };
  const caps: BudgetCaps = { ...request.caps, ...state.raised };
  const leased = leasedOf(state);
  const granted: BudgetCaps = {};
  let returnAtIdle = false;
  const leftAfter: BudgetCaps = {};
  for (const name of BUDGET_NAMES) {
    const limit = caps[name];
    if (limit === undefined) continue;
    const need = request.need[name] ?? 0;
    const left = limit - state.spent[name] - leased[name];
    // A cap the request needs nothing of refuses nothing (one passed by an estimate's error).
    if (need > 0 && need > left + 1e-9) {
      return {
        refused: {
          budget: name,
          limit,
          spent: state.spent[name],
          leased: leased[name],
          reserved: need,
        },
      };
    }
    const ask = Math.max(need, request.ask?.[name] ?? need);
    if (ask * LEASE_SPREAD <= left) {
      granted[name] = ask;
    } else {
      granted[name] = need;
      returnAtIdle = true;
    }
    const rest = left - granted[name]!;
    leftAfter[name] = name === 'costUsd' ? round9(rest) : rest;
  }
  state.leases[request.leaseId] = {
    sessionId: request.sessionId,
    granted,
    windowStart: state.windowStart,
  };
  const windowEnd = windowEndOf(state.window, state.windowStart);
  return {
    granted,
    ...(windowEnd !== undefined ? { windowEnd } : {}),
    returnAtIdle,
    left: leftAfter,
    caps,
  };
}

/** Set the caps `raise` names for every session of the budget, and record who did. */
export function raiseSharedCaps(state: SharedBudgetState, raise: BudgetRaise): void {
  state.raised = { ...state.raised, ...raise.caps };
  state.raises.push(raise);
}

/** What the budget shows at `now`. */
export function sharedBudgetStatusOf(held: SharedBudgetState, now: number): SharedBudgetStatus {
  // A query must not change the ledger: the window rolls on a copy.
  const state = { ...held, previous: [...held.previous], leases: { ...held.leases } };
  roll(state, now);
  return {
    key: state.key,
    ...(state.window !== undefined ? { window: state.window } : {}),
    windowStart: state.windowStart,
    spent: { ...state.spent },
    leased: leasedOf(state),
    leases: Object.values(state.leases).filter((l) => l.windowStart === state.windowStart).length,
    raised: { ...state.raised },
    raises: state.raises.map((r) => ({ ...r, caps: { ...r.caps } })),
    previous: state.previous.map((w) => ({ windowStart: w.windowStart, spent: { ...w.spent } })),
  };
}

/** Whether `lease` still holds `need` on top of what it spent, at `now`. */
export function leaseFits(
  lease: HeldLease | undefined,
  caps: BudgetCaps,
  need: BudgetCaps,
  now: number,
): lease is HeldLease {
  if (!lease) return false;
  if (lease.windowEnd !== undefined && now >= lease.windowEnd) return false;
  for (const name of BUDGET_NAMES) {
    if (caps[name] === undefined) continue;
    if (lease.spent[name] + (need[name] ?? 0) > (lease.granted[name] ?? 0) + 1e-9) return false;
  }
  return true;
}
