/**
 * Claims with a number in the README and the docs, checked against the code. A claim is a
 * pattern applied to the whole text of every page (so it holds wherever a page says it) and
 * what the number it captures must be: a default read from `DEFAULTS`, a limit, or a count
 * measured on a real run. A page that says another number fails, naming page and line.
 *
 * Pure: pages and values come in.
 *
 * @module
 */

import type { Page } from './doc-blocks.js';

/** What a number is counted in; a quantity in the docs is converted to it. */
export type Unit = 'ms' | 'bytes' | 'count';

/** One claim: where the docs state it and what the code says. */
export interface Claim {
  /** What it is, for the failure message: `advanced.hookTimeoutMs default`. */
  name: string;
  /** Global patterns whose group 1 is the number and group 2, if any, its unit. */
  patterns: RegExp[];
  unit: Unit;
  /**
   * The true value, or a function of the sentence the match is in (for a claim whose value
   * depends on its qualifiers): a number, a string saying what the sentence lacks, or
   * undefined for a sentence the claim is not about.
   */
  expected: number | ((sentence: string) => number | string | undefined);
  /** Where the value comes from, for the failure message. */
  source: string;
}

const SCALE: Record<Unit, Record<string, number>> = {
  ms: {
    ms: 1,
    millisecond: 1,
    milliseconds: 1,
    s: 1000,
    second: 1000,
    seconds: 1000,
    min: 60_000,
    minute: 60_000,
    minutes: 60_000,
    h: 3_600_000,
    hour: 3_600_000,
    hours: 3_600_000,
    day: 86_400_000,
    days: 86_400_000,
  },
  bytes: { b: 1, byte: 1, bytes: 1, kib: 1024, mib: 1024 * 1024 },
  count: {},
};

/** A number as the docs write it (`600000`, `600_000`, `100,000`, `30 000`, `1.5`). */
export const NUMBER = String.raw`(\d{1,3}(?:[ ,_]\d{3})+(?![\d])|\d+(?:\.\d+)?)`;
const UNIT_WORD = String.raw`(ms|milliseconds?|s|seconds?|min|minutes?|h|hours?|days?|B|bytes?|KiB|MiB)?\b`;

/**
 * A number and its unit word in the claim's unit; a missing unit counts as the claim's
 * own. Undefined for a unit of another kind (`5 s` for a byte size).
 */
export function quantity(
  number: string,
  unitWord: string | undefined,
  unit: Unit,
): number | undefined {
  const value = Number(number.replace(/[ ,_]/g, ''));
  if (unitWord === undefined || unitWord === '') return value;
  const scale = SCALE[unit][unitWord.toLowerCase()];
  return scale === undefined ? undefined : value * scale;
}

/**
 * The claims of a table of defaults (`DEFAULTS`): for each numeric `name`, a page that
 * writes `` `name` `` (or `advanced.name`, `advanced.temporal.name`) followed by
 * `(default N unit` or `(N unit by default` must say the default.
 */
export function defaultClaims(
  defaults: Readonly<Record<string, unknown>>,
  source: string,
  units: Readonly<Record<string, Unit>> = {},
): Claim[] {
  return Object.entries(defaults).flatMap(([name, value]) =>
    typeof value === 'number'
      ? [optionDefaultClaim(name, value, units[name] ?? unitOfName(name), `${source}.${name}`)]
      : [],
  );
}

/** The unit an option's name says: `...Ms` in ms, `...Bytes` in bytes, else a count. */
export function unitOfName(name: string): Unit {
  if (name.endsWith('Ms')) return 'ms';
  if (name.endsWith('Bytes')) return 'bytes';
  return 'count';
}

/** The claim that option `name` (as the docs write it) defaults to `value`. */
export function optionDefaultClaim(name: string, value: number, unit: Unit, source: string): Claim {
  const option = String.raw`(?<![\w-])${escape(name)}\`?\)?[,:]?\s*\(?\s*`;
  return {
    name: `${name} default`,
    patterns: [
      new RegExp(`${option}default:?\\s+${NUMBER}\\s*${UNIT_WORD}`, 'g'),
      new RegExp(`${option}${NUMBER}\\s*${UNIT_WORD}\\s+by\\s+default`, 'g'),
    ],
    unit,
    expected: value,
    source,
  };
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** 1-based line of `index` in `text`. */
function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** The sentence (or table cell, or paragraph) that holds `index`, on one line. */
export function sentenceAt(text: string, index: number): string {
  const boundary = /\.\s|\n\s*\n|\||\n#/g;
  let start = 0;
  let end = text.length;
  for (const match of text.matchAll(boundary)) {
    const at = match.index;
    if (at + match[0].length <= index) start = at + match[0].length;
    else if (at >= index) {
      end = at;
      break;
    }
  }
  return text.slice(start, end).replace(/\s+/g, ' ').trim();
}

/** Every statement of a claim on the pages that is not the code's value, one line each. */
export function claimErrors(pages: readonly Page[], claims: readonly Claim[]): string[] {
  const errors: string[] = [];
  for (const page of pages) {
    for (const claim of claims) {
      for (const pattern of claim.patterns) {
        for (const match of page.text.matchAll(pattern)) {
          const sentence = sentenceAt(page.text, match.index);
          const expected =
            typeof claim.expected === 'number' ? claim.expected : claim.expected(sentence);
          if (expected === undefined) continue;
          const said = quantity(match[1]!, match[2], claim.unit);
          if (said === expected) continue;
          const where = `${page.file}:${lineAt(page.text, match.index)}`;
          errors.push(
            typeof expected === 'string'
              ? `${where}: ${claim.name}: "${match[0].trim()}" ${expected} ("${sentence}")`
              : `${where}: ${claim.name}: the page says "${match[0].trim()}", the code ${expected}` +
                  `${claim.unit === 'count' ? '' : ` ${claim.unit}`} (${claim.source})`,
          );
        }
      }
    }
  }
  return errors;
}

/** History events a send adds, measured on a real session (a send after the first). */
export interface SendEvents {
  /** A send that calls no tool, in a session with no hook callbacks. */
  base: number;
  /** More for each hook event that has callbacks (one dispatch). */
  perHookEvent: number;
  /** More for each tool call (no tool hooks). */
  perToolCall: number;
}

const COUNT_WORDS: Record<string, number> = {
  no: 0,
  zero: 0,
  a: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
};

/** How many `thing`s the sentence says (`no hook`, `one hook event`, `2 tool calls`). */
function countOf(sentence: string, thing: RegExp): number | undefined {
  const match = new RegExp(
    String.raw`\b(no|zero|a|one|two|three|four|\d+) ${thing.source}`,
    'i',
  ).exec(sentence);
  if (!match) return undefined;
  const word = match[1]!.toLowerCase();
  return COUNT_WORDS[word] ?? Number(word);
}

/**
 * "N history events" in a sentence about a send: N must be what a send adds with the tool
 * calls and hook events with callbacks the sentence names (`calls no tool`, `one tool
 * call`; `no hooks`, `one hook`, `two hook events`). A sentence that names neither fails: a
 * count per send means nothing without them. `plus M for each hook event` states the
 * per-hook part; with it, N is the count with no hooks.
 */
export function sendEventsClaims(measured: SendEvents, source: string): Claim[] {
  return [
    {
      name: 'history events per send',
      patterns: [/\b(\d+) (?:Temporal )?history events\b/g],
      unit: 'count',
      expected(sentence) {
        if (!/\bsends?\b/i.test(sentence)) return undefined;
        const tools = /calls no tool|without (?:a )?tool/i.test(sentence)
          ? 0
          : countOf(sentence, /tool calls?\b/);
        const formula = /for each hook event/i.test(sentence);
        const hooks = countOf(sentence, /hook(?: event)?s?\b/) ?? (formula ? 0 : undefined);
        if (tools === undefined || hooks === undefined) {
          return (
            'does not say how many tool calls the send makes and how many hook events have ' +
            `callbacks: a send that calls no tool, with no hooks, adds ${measured.base}`
          );
        }
        return measured.base + hooks * measured.perHookEvent + tools * measured.perToolCall;
      },
      source,
    },
    {
      name: 'history events per hook event with callbacks',
      patterns: [/\bplus (\d+)(?: more)?(?: history events)? for each hook event\b/g],
      unit: 'count',
      expected: measured.perHookEvent,
      source,
    },
  ];
}
