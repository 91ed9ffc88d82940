/**
 * Spend budgets of one session: the caps, the ledger the session workflow keeps, and the pure
 * rules that reserve a step's worst case, settle what the provider reported and raise a cap.
 * Workflow-safe (no Node imports): the workflow is the ledger, so a replay recomputes it from
 * the history and never counts a step twice.
 *
 * @module
 */
import { tokensOfChars } from './context.js';
import type {
  HeldLease,
  LeaseRequest,
  SharedBudgetOptions,
  SharedBudgetSpec,
} from './shared-budgets.js';

/**
 * Caps of one budget: each optional, each a non-negative number (tokens and calls integers).
 * A step whose worst case would take a cap past its value is refused, never called.
 */
export interface BudgetCaps {
  /** Most input (prompt) tokens the session sends, as the provider counts them. */
  inputTokens?: number;
  /** Most output (completion) tokens the session receives. */
  outputTokens?: number;
  /** Most input + output tokens. */
  totalTokens?: number;
  /** Most model steps (provider calls). */
  modelCalls?: number;
  /** Most tool calls started (each call the model asks for that the session runs). */
  toolCalls?: number;
  /** Most spend in US dollars, priced by `BudgetOptions.prices`. */
  costUsd?: number;
}

/** The name of one cap: `'totalTokens'`, `'costUsd'`, ... */
export type BudgetName = keyof BudgetCaps;

/** Every cap, in the order a reservation checks them. */
export const BUDGET_NAMES: readonly BudgetName[] = [
  'modelCalls',
  'toolCalls',
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'costUsd',
];

/** The price of one model, US dollars per million tokens. */
export interface ModelPrice {
  /** Dollars per million input tokens. */
  inputUsdPerMillion: number;
  /** Dollars per million output tokens. */
  outputUsdPerMillion: number;
}

/**
 * `advanced.budgets`: the caps every session of the agent runs under, the prices that make
 * `costUsd` countable, and the output bound that makes a step's worst case known.
 */
export interface BudgetOptions extends BudgetCaps {
  /**
   * Prices by model id: the agent's `model` id (or a model object's `name`, or the part of it
   * after `provider:`), or a sub-agent's. Needed for a `costUsd` cap.
   * @default none
   */
  prices?: Record<string, ModelPrice>;
  /**
   * Most output tokens one model step may produce, sent to the provider as its limit: the
   * output part of each step's reservation. An integer in [1, 1000000].
   * @default 4096
   */
  maxOutputTokens?: number;
  /**
   * Budgets shared by key (docs/budgets.md, "Shared budgets"): every session of the agent
   * (`scope: 'agent'`), or of a tenant (`scope: 'tenant'`, `createSession({ tenant })`),
   * spends from one durable budget together, optionally in a window (`'hour'`, `'day'`,
   * `'month'`, UTC, or a number of ms). Each holds with the session's own caps.
   * @default none
   */
  shared?: SharedBudgetOptions[];
}

/** Default of {@link BudgetOptions.maxOutputTokens}. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/** What a session's workflow input carries of its budget (absent: no budget). */
export interface SessionBudgetSpec {
  /** The caps at start: the agent's and the session's, the lower of each. */
  caps: BudgetCaps;
  /** Output tokens one step may produce (its reservation's output part). */
  maxOutputTokens: number;
  /** The price of the session's model, when the agent gave one. */
  price?: ModelPrice;
  /** The shared budgets the session spends from too (absent: none). */
  shared?: SharedBudgetSpec[];
}

/** What a session has spent. */
export interface BudgetSpend {
  /** Input tokens, as providers reported them (or estimated: `estimatedSteps`). */
  inputTokens: number;
  /** Output tokens. */
  outputTokens: number;
  /** Input + output tokens. */
  totalTokens: number;
  /** Model steps settled. */
  modelCalls: number;
  /** Tool calls started. */
  toolCalls: number;
  /** US dollars, rounded to 1e-9. */
  costUsd: number;
  /** Model steps whose provider reported no usage: counted by the documented estimate. */
  estimatedSteps: number;
}

/** A cap a reservation would have passed: the prompt ends `budget_exceeded` naming it. */
export interface BudgetExceeded {
  /** The cap. */
  budget: BudgetName;
  /** Its value. */
  limit: number;
  /** Spent when the reservation was refused. */
  spent: number;
  /** What the refused step or call reserved of it (its worst case). */
  reserved: number;
  /** The shared budget's key, when a shared budget refused (`tenant:acme:day`). */
  shared?: string;
  /** A shared budget: what other sessions' leases held when it refused. */
  leased?: number;
}

/** One `raiseBudget`: the caps it set, who set them, when (ms since the epoch). */
export interface BudgetRaise {
  /** The caps it set. */
  caps: BudgetCaps;
  /** Who raised it (the client's identity, or `unknown`). */
  identity: string;
  /** When, ms since the epoch (workflow time). */
  at: number;
}

/** The session's budget as the workflow keeps it, and carries over continue-as-new. */
export interface BudgetLedger {
  /** The caps now (raised ones included). */
  caps: BudgetCaps;
  spent: BudgetSpend;
  /** The raises so far, oldest first. */
  raises: BudgetRaise[];
  /** The last refusal, until a raise clears it. */
  exceeded?: BudgetExceeded;
  /**
   * Input tokens the provider counted beyond the workflow's estimate of the context at the
   * last step that reported usage (tool declarations, system text, tokenizer): added to the
   * next estimates.
   */
  inputOverhead: number;
  /** The leases of shared budgets the session holds, by key (absent: none held yet). */
  leases?: Record<string, HeldLease>;
  /** Requests made to shared budgets so far: the next one's id ends `/<n + 1>`. */
  leaseSeq?: number;
  /** Requests to shared budgets not answered yet, by key: sent again, the same, first. */
  pendingLeases?: Record<string, LeaseRequest>;
}

/** What `describe()` shows of a session's budget. */
export interface BudgetStatus {
  /** The caps now. */
  caps: BudgetCaps;
  /** Spent so far. */
  spent: BudgetSpend;
  /** What is left of each cap set (never negative). */
  remaining: BudgetCaps;
  /** The refusal that ended the last prompt, until a raise clears it. */
  exceeded?: BudgetExceeded;
  /** Raises, oldest first. */
  raises: BudgetRaise[];
}

/** Usage of one model step, as the provider reported it. */
export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** A fresh ledger for `spec`. */
export function newLedger(spec: SessionBudgetSpec): BudgetLedger {
  return {
    caps: { ...spec.caps },
    spent: {
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      modelCalls: 0,
      toolCalls: 0,
      costUsd: 0,
      estimatedSteps: 0,
    },
    raises: [],
    inputOverhead: 0,
  };
}

/** Dollars for `input` and `output` tokens at `price`, rounded to 1e-9. */
export function costOf(price: ModelPrice | undefined, input: number, output: number): number {
  if (!price) return 0;
  return round9((input * price.inputUsdPerMillion + output * price.outputUsdPerMillion) / 1e6);
}

/** `n` rounded to 1e-9 (dollars are counted to the nano-dollar). */
export const round9 = (n: number) => Math.round(n * 1e9) / 1e9;

/** The worst case of a model step: each cap's share of it. */
export function stepWorstCase(
  spec: SessionBudgetSpec,
  inputEstimate: number,
): Required<BudgetCaps> {
  const output = spec.maxOutputTokens;
  return {
    modelCalls: 1,
    toolCalls: 0,
    inputTokens: inputEstimate,
    outputTokens: output,
    totalTokens: inputEstimate + output,
    costUsd: costOf(spec.price, inputEstimate, output),
  };
}

/**
 * Reserve `worst` against the ledger's caps: the first cap (in {@link BUDGET_NAMES} order)
 * it would take past its value, recorded as `ledger.exceeded`; undefined when every cap
 * holds (nothing is recorded: the step settles what it really spent).
 */
export function reserve(ledger: BudgetLedger, worst: BudgetCaps): BudgetExceeded | undefined {
  for (const budget of BUDGET_NAMES) {
    const limit = ledger.caps[budget];
    const reserved = worst[budget] ?? 0;
    if (limit === undefined || reserved === 0) continue;
    const spent = ledger.spent[budget];
    if (spent + reserved > limit) {
      const exceeded = { budget, limit, spent, reserved };
      ledger.exceeded = exceeded;
      return exceeded;
    }
  }
  return undefined;
}

/**
 * Settle one model step. `usage` as the provider reported it; absent, the estimate counts
 * (`inputEstimate` in, the answer's JSON characters / 4 out) and `spent.estimatedSteps` says
 * so. Calibrates the next input estimates on reported usage.
 */
export function settleStep(
  ledger: BudgetLedger,
  spec: SessionBudgetSpec,
  step: { usage?: StepUsage; inputEstimate: number; contextEstimate: number; answerChars: number },
): StepUsage & { estimated: boolean } {
  const usage = step.usage ?? {
    inputTokens: step.inputEstimate,
    outputTokens: tokensOfChars(step.answerChars),
    totalTokens: step.inputEstimate + tokensOfChars(step.answerChars),
  };
  const spent = ledger.spent;
  spent.inputTokens += usage.inputTokens;
  spent.outputTokens += usage.outputTokens;
  spent.totalTokens += usage.totalTokens;
  spent.modelCalls += 1;
  spent.costUsd = round9(spent.costUsd + costOf(spec.price, usage.inputTokens, usage.outputTokens));
  if (step.usage) {
    ledger.inputOverhead = Math.max(0, step.usage.inputTokens - step.contextEstimate);
  } else {
    spent.estimatedSteps += 1;
  }
  return { ...usage, estimated: step.usage === undefined };
}

/** The input estimate of a step whose context the workflow estimates at `contextEstimate`. */
export function inputEstimateOf(ledger: BudgetLedger, contextEstimate: number): number {
  return contextEstimate + ledger.inputOverhead;
}

/** Count one tool call started. */
export function settleToolCall(ledger: BudgetLedger): void {
  ledger.spent.toolCalls += 1;
}

/** What is left of each cap set, never negative. */
export function remainingOf(ledger: BudgetLedger): BudgetCaps {
  const remaining: BudgetCaps = {};
  for (const budget of BUDGET_NAMES) {
    const limit = ledger.caps[budget];
    if (limit === undefined) continue;
    remaining[budget] = Math.max(
      0,
      budget === 'costUsd' ? round9(limit - ledger.spent[budget]) : limit - ledger.spent[budget],
    );
  }
  return remaining;
}

/** What `describe()` shows. */
export function budgetStatusOf(ledger: BudgetLedger): BudgetStatus {
  return {
    caps: { ...ledger.caps },
    spent: { ...ledger.spent },
    remaining: remainingOf(ledger),
    ...(ledger.exceeded ? { exceeded: { ...ledger.exceeded } } : {}),
    raises: ledger.raises.map((r) => ({ ...r, caps: { ...r.caps } })),
  };
}

/** Set the caps `raise` names (others stay), record who did, and clear the last refusal. */
export function raiseCaps(ledger: BudgetLedger, raise: BudgetRaise): void {
  ledger.caps = { ...ledger.caps, ...raise.caps };
  ledger.raises.push(raise);
  delete ledger.exceeded;
}

/** The lower of each cap of `a` and `b` (a cap either sets holds). */
export function lowerCaps(a: BudgetCaps, b: BudgetCaps | undefined): BudgetCaps {
  const caps: BudgetCaps = { ...a };
  for (const budget of BUDGET_NAMES) {
    const other = b?.[budget];
    if (other === undefined) continue;
    const own = caps[budget];
    caps[budget] = own === undefined ? other : Math.min(own, other);
  }
  return caps;
}

/**
 * The problems of a caps object at `path` (`advanced.budgets`, `budgets`), each naming the
 * field: not an object, an unknown key, a negative or non-finite cap, a token or call cap
 * that is not an integer. `extraKeys` are allowed besides the caps (checked by the caller).
 */
export function capsProblems(
  value: unknown,
  path: string,
  extraKeys: readonly string[] = [],
): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [`${path} must be an object of caps { ${BUDGET_NAMES.join(', ')} }`];
  }
  const problems: string[] = [];
  for (const [key, cap] of Object.entries(value)) {
    if (extraKeys.includes(key)) continue;
    if (!(BUDGET_NAMES as readonly string[]).includes(key)) {
      problems.push(
        `${path} has an unknown key '${key}' (keys: ${[...BUDGET_NAMES, ...extraKeys].join(', ')})`,
      );
      continue;
    }
    if (cap === undefined) continue;
    const integer = key !== 'costUsd';
    if (
      typeof cap !== 'number' ||
      !Number.isFinite(cap) ||
      cap < 0 ||
      (integer && !Number.isInteger(cap))
    ) {
      problems.push(
        `${path}.${key} must be ${integer ? 'a non-negative integer' : 'a non-negative number of US dollars'}, got ${typeof cap === 'number' || typeof cap === 'string' ? JSON.stringify(cap) : typeof cap}`,
      );
    }
  }
  return problems;
}
