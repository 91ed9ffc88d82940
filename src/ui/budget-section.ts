/**
 * The session page's budget: each cap with what is spent and what is left, what is spent of
 * what has no cap, and who raised which cap when. Recounted from the session's history
 * (`timeline.budget`, as `inspect` does), its sub-agents' spend included. Pure.
 *
 * @module
 */
import type { BudgetCaps } from '../common/budgets.js';
import type { HistoryBudget } from '../history/timeline-budget.js';
import { esc, time } from './pages.js';

const CAPS: ReadonlyArray<keyof BudgetCaps> = [
  'inputTokens',
  'outputTokens',
  'totalTokens',
  'modelCalls',
  'toolCalls',
  'costUsd',
];

/** A cap's value as the page shows it: dollars with a `$`, counts as they are. */
function amount(cap: keyof BudgetCaps, value: number | undefined): string {
  if (value === undefined) return '—';
  return cap === 'costUsd' ? `$${value}` : String(value);
}

/** The budget section; empty for a session without a budget. */
export function budgetSection(budget: HistoryBudget | undefined): string {
  if (!budget) return '';
  const rows = CAPS.filter((cap) => budget.caps[cap] !== undefined || budget.spent[cap] > 0)
    .map(
      (cap) =>
        `<tr data-testid="budget-${cap}"><td>${cap}</td><td>${amount(cap, budget.caps[cap])}</td><td>${amount(
          cap,
          budget.spent[cap],
        )}</td><td>${amount(cap, budget.remaining[cap])}</td></tr>`,
    )
    .join('');
  const estimated =
    budget.spent.estimatedSteps > 0
      ? `<p class="facts">${budget.spent.estimatedSteps} step(s) counted by the estimate (no usage reported)</p>`
      : '';
  const raises = budget.raiseLog
    .map((raise) => {
      const caps = Object.entries(raise.caps)
        .map(([cap, value]) => `${esc(cap)} ${esc(String(value))}`)
        .join(', ');
      return `<li data-testid="budget-raise">${caps} by <b>${esc(raise.identity || 'unknown')}</b> at ${time(raise.at)}</li>`;
    })
    .join('');
  return `<section class="budget" data-testid="budget"><h2>Budget</h2>
<table><tr><th>cap</th><th>limit</th><th>spent</th><th>left</th></tr>${rows}</table>${estimated}${
    raises ? `<p>Raised:</p><ul>${raises}</ul>` : ''
  }</section>`;
}
