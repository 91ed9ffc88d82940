/**
 * The defaults and limits the README and docs/**\/*.md state are the code's: wherever a page
 * writes an option of `DEFAULTS` (src/common/defaults.ts) followed by "(default N unit" or
 * "(N unit by default", N is that default (units converted: `600000 ms`, `10 minutes`,
 * `64 KiB`); so are the CLI's defaults the docs give (`--limit N (default 50)`, the session
 * page's port). The claims and their patterns are in test/helpers/doc-claims.ts; the count of
 * history events per send needs a server and is checked in
 * test/integration/docs/docs-claims.test.ts.
 *
 * The pages come from the filesystem; DOC_BLOCKS_ONLY (a comma-separated list of pages,
 * e.g. `DOC_BLOCKS_ONLY=docs/testing-hooks.md`) checks some of them only.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_UI_PORT } from '../../../src/cli/cli-defaults.js';
import { DEFAULTS } from '../../../src/common/defaults.js';
import { GATE_DEFAULT_LIMIT } from '../../../src/testing/gate.js';
import {
  claimErrors,
  defaultClaims,
  optionDefaultClaim,
  quantity,
  sendEventsClaims,
  type Claim,
} from '../../helpers/doc-claims.js';
import { readDocPages } from '../../helpers/doc-blocks.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

/** The default and limit claims of the docs, each with where its value comes from. */
const DEFAULT_CLAIMS: Claim[] = [
  ...defaultClaims(DEFAULTS, 'DEFAULTS'),
  optionDefaultClaim('holdMs', DEFAULTS.upgradeHoldMs, 'ms', 'DEFAULTS.upgradeHoldMs'),
  optionDefaultClaim(
    'subagents.maxDepth',
    DEFAULTS.subagentsMaxDepth,
    'count',
    'DEFAULTS.subagentsMaxDepth',
  ),
  optionDefaultClaim(
    'subagents.maxConcurrent',
    DEFAULTS.subagentsMaxConcurrent,
    'count',
    'DEFAULTS.subagentsMaxConcurrent',
  ),
  optionDefaultClaim(
    'subagents.timeoutMs',
    DEFAULTS.subagentsTimeoutMs,
    'ms',
    'DEFAULTS.subagentsTimeoutMs',
  ),
  optionDefaultClaim('--limit N', GATE_DEFAULT_LIMIT, 'count', 'GATE_DEFAULT_LIMIT'),
  optionDefaultClaim('--port', DEFAULT_UI_PORT, 'count', 'DEFAULT_UI_PORT (durable-agent ui)'),
  {
    name: 'maxToolOutputBytes default',
    patterns: [/capped at `maxToolOutputBytes` \((\d+)\s*(KiB|bytes)\)/g],
    unit: 'bytes',
    expected: DEFAULTS.maxToolOutputBytes,
    source: 'DEFAULTS.maxToolOutputBytes',
  },
];

const page = (text: string) => [{ file: 'a.md', text }];

describe('claims', () => {
  it('reads numbers and units as the docs write them', () => {
    expect(quantity('600_000', 'ms', 'ms')).toBe(600_000);
    expect(quantity('100,000', undefined, 'count')).toBe(100_000);
    expect(quantity('30 000', 'ms', 'ms')).toBe(30_000);
    expect(quantity('24', 'h', 'ms')).toBe(86_400_000);
    expect(quantity('64', 'KiB', 'bytes')).toBe(65_536);
    expect(quantity('5', 's', 'bytes')).toBeUndefined();
  });

  it('finds a default however it is written, and names a wrong one with its line', () => {
    const claims = [optionDefaultClaim('hookTimeoutMs', 600_000, 'ms', 'DEFAULTS.hookTimeoutMs')];
    const right = [
      '`advanced.hookTimeoutMs` (default 600000 ms, ten minutes)',
      '`hookTimeoutMs` (default 10 minutes)',
      '(`hookTimeoutMs`,\n600 s by default)',
      '`hookTimeoutMs` for a tool; `sessionEndHookTimeoutMs` (default 3000 ms)',
    ];
    for (const text of right) expect(claimErrors(page(text), claims), text).toEqual([]);
    expect(claimErrors(page('x\n`hookTimeoutMs` (default 60 s)'), claims)).toEqual([
      'a.md:2: hookTimeoutMs default: the page says "hookTimeoutMs` (default 60 s", the code 600000 ms (DEFAULTS.hookTimeoutMs)',
    ]);
  });

  it('checks history events per send against the tool calls and hooks its sentence names', () => {
    const claims = sendEventsClaims({ base: 11, perHookEvent: 6, perToolCall: 13 }, 'a run');
    const right = [
      'A send that calls no tool adds 11 history events, plus 6 for each hook event that has callbacks.',
      'With one hook, a send that calls no tool adds 17 history events.',
      'A send with one tool call and no hooks adds 24 history events.',
      'A session replays 48 history events.',
    ];
    for (const text of right) expect(claimErrors(page(text), claims), text).toEqual([]);
    expect(claimErrors(page('It writes 17 history events per send.'), claims)[0]).toMatch(
      /a\.md:1: history events per send: "17 history events" does not say how many tool calls/,
    );
    expect(
      claimErrors(
        page('A send that calls no tool adds 12 history events, plus 5 for each hook event.'),
        claims,
      ),
    ).toEqual([
      'a.md:1: history events per send: the page says "12 history events", the code 11 (a run)',
      'a.md:1: history events per hook event with callbacks: the page says "plus 5 for each hook event", the code 6 (a run)',
    ]);
  });
});

describe('the defaults README.md and docs/ state', () => {
  it("are the code's defaults", () => {
    const errors = claimErrors(readDocPages(repo), DEFAULT_CLAIMS);
    if (errors.length > 0) throw new Error(`${errors.length} claim(s):\n${errors.join('\n')}`);
  });
});
