/**
 * The rules of `advanced.budgets` and a session's `budgets`, and what a session's workflow
 * input carries of them (`SessionBudgetSpec`): the caps (the lower of the agent's and the
 * session's), the output bound, the price of the agent's model.
 *
 * @module
 */
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  capsProblems,
  lowerCaps,
  type BudgetCaps,
  type BudgetOptions,
  type ModelPrice,
  type SessionBudgetSpec,
} from '../common/budgets.js';
import {
  sharedBudgetKey,
  type SharedBudgetOptions,
  type SharedBudgetSpec,
} from '../common/shared-budgets.js';
import { ConfigError } from '../common/errors.js';
import type { AgentModel } from '../models/model.js';
import { describeValue, rule } from './rule-builders.js';
import type { ResolvedSubagents } from './options.js';

/** `advanced.budgets`: caps, `prices` and `maxOutputTokens`, each field named when refused. */
export const agentBudgetsSchema = rule((value, issue) => {
  if (value === undefined) return;
  const path = 'advanced.budgets';
  capsProblems(value, path, ['prices', 'maxOutputTokens', 'shared']).forEach(issue);
  if (typeof value !== 'object' || value === null) return;
  const { prices, maxOutputTokens, shared } = value as BudgetOptions;
  sharedBudgetsProblems(shared, `${path}.shared`).forEach(issue);
  if (
    maxOutputTokens !== undefined &&
    (typeof maxOutputTokens !== 'number' ||
      !Number.isInteger(maxOutputTokens) ||
      maxOutputTokens < 1 ||
      maxOutputTokens > 1_000_000)
  ) {
    issue(
      `${path}.maxOutputTokens must be an integer from 1 to 1000000, got ${describeValue(maxOutputTokens)}`,
    );
  }
  if (prices === undefined) return;
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) {
    issue(`${path}.prices must be an object of prices by model id, got ${describeValue(prices)}`);
    return;
  }
  for (const [model, price] of Object.entries(prices)) {
    const at = `${path}.prices['${model}']`;
    if (typeof price !== 'object' || price === null || Array.isArray(price)) {
      issue(
        `${at} must be { inputUsdPerMillion, outputUsdPerMillion }, got ${describeValue(price)}`,
      );
      continue;
    }
    for (const key of Object.keys(price)) {
      if (key !== 'inputUsdPerMillion' && key !== 'outputUsdPerMillion')
        issue(`${at} has an unknown key '${key}' (keys: inputUsdPerMillion, outputUsdPerMillion)`);
    }
    for (const key of ['inputUsdPerMillion', 'outputUsdPerMillion'] as const) {
      const n = (price as Partial<ModelPrice>)[key];
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0)
        issue(`${at}.${key} must be a non-negative number of US dollars, got ${describeValue(n)}`);
    }
  }
});

/**
 * The problems of `advanced.budgets.shared`, each naming the field: not an array, an entry
 * without a `scope` of `'agent'` or `'tenant'`, a window that is neither `'hour'`, `'day'`,
 * `'month'` nor a whole number of ms of at least 1000, a bad cap, two entries with the same
 * scope and window (one budget).
 */
function sharedBudgetsProblems(value: unknown, path: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    return [`${path} must be an array of { scope, window?, ...caps }, got ${describeValue(value)}`];
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  value.forEach((entry: unknown, i) => {
    const at = `${path}[${i}]`;
    problems.push(...capsProblems(entry, at, ['scope', 'window']));
    if (typeof entry !== 'object' || entry === null) return;
    const { scope, window } = entry as SharedBudgetOptions;
    if (scope !== 'agent' && scope !== 'tenant') {
      problems.push(`${at}.scope must be 'agent' or 'tenant', got ${describeValue(scope)}`);
    }
    if (
      window !== undefined &&
      window !== 'hour' &&
      window !== 'day' &&
      window !== 'month' &&
      !(typeof window === 'number' && Number.isInteger(window) && window >= 1000)
    ) {
      problems.push(
        `${at}.window must be 'hour', 'day', 'month' or a whole number of ms >= 1000, got ${describeValue(window)}`,
      );
    }
    const key = `${String(scope)}/${String(window)}`;
    if (seen.has(key)) problems.push(`${at} repeats the scope and window of an earlier entry`);
    seen.add(key);
  });
  return problems;
}

/** A session's `budgets`: caps only (prices and the output bound are the agent's). */
export const sessionBudgetsSchema = rule((value, issue) => {
  if (value !== undefined) capsProblems(value, 'budgets').forEach(issue);
});

/**
 * The ids a price may be given under for `model`: the id itself, or a model object's `name`
 * and the part of it after `provider:` (`openai:gpt-4o` gives `gpt-4o` too).
 */
function modelIdsOf(model: string | AgentModel | undefined): string[] {
  if (model === undefined) return [];
  if (typeof model === 'string') return [model];
  const colon = model.name.indexOf(':');
  return colon > 0 ? [model.name, model.name.slice(colon + 1)] : [model.name];
}

/**
 * The definition's budgets, checked against its models: each price is for one of them
 * (the agent's `model`, or a sub-agent's), and a `costUsd` cap has the agent's model
 * priced. Returns the budgets as given, copied.
 * @throws {ConfigError} naming the field.
 */
export function resolveAgentBudgets(
  budgets: BudgetOptions | undefined,
  model: string | AgentModel,
  subagents: ResolvedSubagents | undefined,
): BudgetOptions | undefined {
  if (budgets === undefined) return undefined;
  const models = [
    model,
    ...Object.values(subagents?.agents ?? {}).map((agent) =>
      agent.model === 'inherit' ? undefined : agent.model,
    ),
  ];
  const known = new Set(models.flatMap(modelIdsOf));
  for (const model of Object.keys(budgets.prices ?? {})) {
    if (!known.has(model)) {
      throw new ConfigError(
        `Invalid agent options: advanced.budgets.prices['${model}'] is for a model this agent ` +
          `does not use (its models: ${[...known].map((id) => `'${id}'`).join(', ')})`,
      );
    }
  }
  const costCap =
    budgets.costUsd !== undefined
      ? 'advanced.budgets.costUsd'
      : budgets.shared?.some((s) => s.costUsd !== undefined)
        ? `advanced.budgets.shared[${budgets.shared.findIndex((s) => s.costUsd !== undefined)}].costUsd`
        : undefined;
  if (costCap !== undefined && priceOf(budgets, models[0]) === undefined) {
    throw new ConfigError(
      `Invalid agent options: ${costCap} needs a price for the agent's model: ` +
        `give advanced.budgets.prices[${modelIdsOf(models[0])
          .map((id) => `'${id}'`)
          .join(' or ')}]`,
    );
  }
  return structuredClone(budgets);
}

/** The price of `model` in `budgets`, under any of its ids. */
function priceOf(
  budgets: BudgetOptions,
  model: string | AgentModel | undefined,
): ModelPrice | undefined {
  for (const id of modelIdsOf(model)) {
    const price = budgets.prices?.[id];
    if (price) return price;
  }
  return undefined;
}

/**
 * What a session's workflow input carries of its budget: undefined when neither the agent
 * nor the session sets a cap (the session's input, and history, stay as they were).
 * @throws {ConfigError} naming `budgets.costUsd` when the session caps cost and the agent
 *   prices no model.
 */
export function sessionBudgetSpec(
  agent: BudgetOptions | undefined,
  model: string | AgentModel,
  session: BudgetCaps | undefined,
  owner: { agentName: string; tenant?: string } = { agentName: '' },
): SessionBudgetSpec | undefined {
  const { prices: _prices, maxOutputTokens, shared: sharedOptions, ...agentCaps } = agent ?? {};
  const caps = lowerCaps(agentCaps, session);
  const shared = sharedSpecsOf(sharedOptions, owner);
  if (Object.values(caps).every((cap) => cap === undefined) && !shared) return undefined;
  const price = agent ? priceOf(agent, model) : undefined;
  if (caps.costUsd !== undefined && price === undefined) {
    throw new ConfigError(
      "Invalid session options: budgets.costUsd needs a price for the agent's model in " +
        'advanced.budgets.prices',
    );
  }
  return {
    caps,
    maxOutputTokens: maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    ...(price ? { price: { ...price } } : {}),
    ...(shared ? { shared } : {}),
  };
}

/**
 * The shared budgets a session spends from, keyed by its agent and tenant.
 * @throws {ConfigError} naming `tenant` when a budget is per tenant and the session names none.
 */
function sharedSpecsOf(
  shared: SharedBudgetOptions[] | undefined,
  owner: { agentName: string; tenant?: string },
): SharedBudgetSpec[] | undefined {
  if (!shared?.length) return undefined;
  return shared.map((options, i) => {
    if (options.scope === 'tenant' && owner.tenant === undefined) {
      throw new ConfigError(
        `Invalid session options: tenant is required: advanced.budgets.shared[${i}] is shared ` +
          "per tenant (createSession({ tenant: 'acme' }))",
      );
    }
    const { scope: _scope, window, ...caps } = options;
    return {
      key: sharedBudgetKey(options, owner.agentName, owner.tenant),
      caps,
      ...(window !== undefined ? { window } : {}),
    };
  });
}

/**
 * The price of each sub-agent's model in a session with `budget` (its own model's, or the
 * agent's when it inherits it), by sub-agent name; empty without a budget. A sub-agent's
 * spend counts against its parent's budget, `costUsd` included.
 * @throws {ConfigError} when the session caps `costUsd` and a sub-agent's model has no price
 *   (its spend could not be counted), naming the sub-agent and the field to give.
 */
export function subagentPrices(
  agent: BudgetOptions | undefined,
  model: string | AgentModel,
  subagents: ResolvedSubagents | undefined,
  budget: SessionBudgetSpec | undefined,
): Record<string, ModelPrice> {
  const prices: Record<string, ModelPrice> = {};
  if (!budget || !subagents) return prices;
  for (const sub of Object.values(subagents.agents)) {
    const own = sub.model === 'inherit' ? model : sub.model;
    const price = agent ? priceOf(agent, own) : undefined;
    if (price) {
      prices[sub.name] = { ...price };
    } else if (
      budget.caps.costUsd !== undefined ||
      budget.shared?.some((s) => s.caps.costUsd !== undefined)
    ) {
      throw new ConfigError(
        `Invalid agent options: budgets.costUsd counts sub-agent '${sub.name}''s spend, which ` +
          `needs a price for its model: give advanced.budgets.prices[${modelIdsOf(own)
            .map((id) => `'${id}'`)
            .join(' or ')}]`,
      );
    }
  }
  return prices;
}
