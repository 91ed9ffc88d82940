/**
 * The session page's pure parts: its HTML escapes every value of a session (prompts, tool
 * inputs, reasons: user and model content), the `ui` command's options, and the bad options
 * of `createSessionUi`.
 */
import type { PendingPermission } from '../../../src/common/permission.js';
import { readFileSync } from 'node:fs';
import { Client } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../../src/cli/args.js';
import { CliError } from '../../../src/cli/cli-error.js';
import { ConfigError } from '../../../src/common/errors.js';
import { describeDecidedRequest } from '../../../src/history/decided.js';
import { timelineFromHistory } from '../../../src/history/timeline.js';
import { createSessionUi } from '../../../src/ui/index.js';
import { inboxPage, relativeTime } from '../../../src/ui/pages.js';
import { sessionPage } from '../../../src/ui/session-page.js';

const demo = () =>
  timelineFromHistory(
    historyFromJSON(
      JSON.parse(
        readFileSync(
          new URL('../../fixtures/histories/demo-session.json', import.meta.url),
          'utf8',
        ),
      ),
    ),
  );

const EVIL = '</textarea><script>alert(1)</script><img src=x onerror=alert(2)>"\'';
const ESCAPED =
  '&lt;/textarea&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&quot;&#39;';

/** The HTML's tags: only the page's own, never one from the session. */
function scripts(html: string): string[] {
  return html.match(/<script[^>]*>/g) ?? [];
}

describe('the session page escapes session data', () => {
  it('a prompt, a reason, an answer and a tool input with markup show as text', () => {
    const timeline = demo();
    timeline.prompts[0]!.prompt = EVIL;
    timeline.prompts[0]!.text = EVIL;
    timeline.dispatches[2]!.reason = EVIL;
    timeline.toolCalls[0]!.input = { file_path: EVIL };
    const html = sessionPage({ timeline, status: 'idle', pending: [], notice: EVIL });
    expect(scripts(html)).toEqual(['<script src="/assets/ui.js" defer>']);
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('</textarea><script>');
    // prompt, answer, reason, notice, and the input inside its JSON block (quotes escaped twice: JSON then HTML)
    expect(html.split(ESCAPED).length - 1).toBe(4);
    expect(html).toContain('&lt;/textarea&gt;&lt;script&gt;alert(1)');
  });

  it("a pending request's input and message stay inside the form's textarea", () => {
    const html = inboxPage([
      {
        sessionId: `s-${EVIL}`,
        request: {
          requestId: 'r"1',
          toolUseId: 'call"1',
          toolName: 'Write',
          toolKind: 'write',
          input: { file_path: 'a.md', content: EVIL },
          affectedPaths: [EVIL],
          message: EVIL,
          askedAt: 0,
          deadline: 1,
        },
      },
    ]);
    expect(scripts(html)).toEqual(['<script src="/assets/ui.js" defer>']);
    expect(html.match(/<textarea/g)).toHaveLength(1);
    expect(html.match(/<\/textarea>/g)).toHaveLength(1);
    expect(html).toContain('value="call&quot;1"');
    expect(html).toContain('/requests/r%221/approve');
  });
});

describe('the inbox binds an answer to the call it shows', () => {
  const digest = '0123456789ab'.padEnd(64, 'f');
  const card = (withDigest: boolean) =>
    inboxPage([
      {
        sessionId: 's1',
        request: {
          requestId: 'r1',
          toolUseId: 'call-1',
          toolName: 'Write',
          toolKind: 'write',
          input: { file_path: 'a.md' },
          affectedPaths: ['a.md'],
          askedAt: 0,
          deadline: 1,
          ...(withDigest ? { digest } : {}),
        },
      },
    ]);

  it("shows the digest's 12 hex digits and carries it whole in both forms", () => {
    const html = card(true);
    expect(html).toContain(
      `<code data-testid="request-digest" title="${digest}">0123456789ab</code>`,
    );
    expect(html.split(`<input type="hidden" name="digest" value="${digest}">`)).toHaveLength(3);
  });

  it('carries no digest for a request from a worker older than digests', () => {
    const html = card(false);
    expect(html).not.toContain('name="digest"');
    expect(html).not.toContain('request-digest');
  });
});

describe("the inbox shows a request's approval stage", () => {
  const page = (fields: Partial<PendingPermission>) =>
    inboxPage(
      [
        {
          sessionId: 's1',
          request: {
            requestId: 'r1',
            toolUseId: 'call-1',
            toolName: 'Write',
            toolKind: 'write',
            input: {},
            affectedPaths: [],
            askedAt: 0,
            deadline: 4_000_000,
            ...fields,
          },
        },
      ],
      { fallback: 'test', now: 0 },
    );

  it('says the stage, the group escalated to, and when the next stage or the deadline comes', () => {
    expect(page({ stage: 'reminded', nextStageAt: 120_000 })).toMatch(
      /data-stage="reminded">reminded, next stage in 2 min</,
    );
    expect(page({ stage: 'escalated', escalateTo: 'ops', nextStageAt: 4_000_000 })).toMatch(
      /data-stage="escalated">escalated to ops, deadline in 1 h</,
    );
    expect(page({})).not.toContain('request-stage');
  });
});

describe('the session page shows the approval stages an ask reached', () => {
  it('between the ask and its outcome, escaped, and nothing for an ask without stages', () => {
    const timeline = demo();
    const call = timeline.toolCalls.find((c) => c.permission?.ask)!;
    expect(sessionPage({ timeline, status: 'idle', pending: [] })).not.toContain('ask-stage');
    const ask = call.permission!.ask!;
    ask.stages = [
      { stage: 'reminded', at: ask.askedAt + 1_000 },
      { stage: 'escalated', at: ask.askedAt + 2_000, escalateTo: EVIL },
    ];
    const html = sessionPage({ timeline, status: 'idle', pending: [] });
    expect(html).toContain('<span data-testid="ask-stage">reminded <time ');
    expect(html).toContain(`<span data-testid="ask-stage">escalated to ${ESCAPED} <time `);
  });
});

describe('durable-agent ui options', () => {
  it('takes --port, --host, --task-queue, --identity, --limit and --timeout', () => {
    const parsed = parseCommandLine(
      [
        'ui',
        '--port',
        '9000',
        '--host',
        '::1',
        '--task-queue',
        'q',
        '--identity',
        'ops',
        '--limit',
        '5',
        '--timeout',
        '3s',
      ],
      { HOME: '/nonexistent' },
    );
    expect(parsed).toMatchObject({
      command: 'ui',
      port: 9000,
      host: '::1',
      taskQueue: 'q',
      identity: 'ops',
      limit: 5,
      timeoutMs: 3000,
    });
  });

  it('refuses options of other commands, naming them', () => {
    expect(() => parseCommandLine(['ui', '--input', '{}'], { HOME: '/nonexistent' })).toThrow(
      CliError,
    );
    expect(() => parseCommandLine(['ui', '--input', '{}'], { HOME: '/nonexistent' })).toThrow(
      /ui does not take --input/,
    );
  });
});

describe('createSessionUi options', () => {
  it('refuses a token under 16 characters, and a client that is not a Temporal Client', async () => {
    const client = new Client(); // a lazy connection: nothing is dialled
    await expect(createSessionUi({ client, token: 'short' })).rejects.toThrow(ConfigError);
    await expect(createSessionUi({ client, token: 'short' })).rejects.toThrow(
      /token must have at least 16 characters/,
    );
    await expect(createSessionUi({ client, limit: 0 })).rejects.toThrow(
      /limit must be a positive integer, got 0/,
    );
    await expect(createSessionUi({ client: {} as Client })).rejects.toThrow(
      /needs client: a Temporal Client/,
    );
  });
});

describe('describeDecidedRequest', () => {
  // The Write approval recorded in demo-session.json, by the demo's client (pid@host).
  const approvedId = '0fe7459d-d982-4ccd-a8ce-7e693840ba4d';

  it('an approved request: by whom and when', () => {
    expect(describeDecidedRequest(demo(), { requestId: approvedId })).toMatch(
      new RegExp(
        `^request ${approvedId} \\(Write NOTES\\.md\\) was already approved by 3602@vm at 20\\S+Z$`,
      ),
    );
  });

  it('denied with a message, expired (found by its tool call), cancelled, and one the history never saw', () => {
    const timeline = demo();
    const ask = timeline.toolCalls.at(-1)!.permission!.ask!;
    ask.outcome = 'denied';
    ask.message = 'not today';
    expect(describeDecidedRequest(timeline, { requestId: approvedId })).toMatch(
      /was already denied by 3602@vm at \S+Z: "not today"$/,
    );
    ask.outcome = 'expired';
    delete ask.requestId; // an expired request's id is not in the history
    expect(describeDecidedRequest(timeline, { requestId: 'r-9', toolUseId: 'call_3_0' })).toMatch(
      /^request r-9 \(Write NOTES\.md\) expired at its deadline \S+Z with no answer: denied$/,
    );
    ask.outcome = 'cancelled';
    expect(describeDecidedRequest(timeline, { requestId: 'r-9', toolUseId: 'call_3_0' })).toMatch(
      /was cancelled at \S+Z \(the prompt was aborted or the session closed\) before an answer$/,
    );
    expect(describeDecidedRequest(timeline, { requestId: 'r-unknown' })).toMatch(
      /^no permission request 'r-unknown' waits in session '\S+': it was decided, expired or never asked$/,
    );
  });
});

describe('the session page names the version the session runs', () => {
  it('after a move, the version moved to (and the one it started on)', () => {
    const timeline = timelineFromHistory(
      historyFromJSON(
        JSON.parse(
          readFileSync(
            new URL('../../fixtures/histories/upgraded-session.json', import.meta.url),
            'utf8',
          ),
        ),
      ),
    );
    const html = sessionPage({ timeline, status: 'idle', pending: [] });
    expect(html).toContain('version <span data-testid="version">v2</span> (started on v1)');
  });
});

describe('the session page shows the budget', () => {
  const budgeted = () =>
    timelineFromHistory(
      historyFromJSON(
        JSON.parse(
          readFileSync(
            new URL('../../fixtures/histories/budget-session-run2.json', import.meta.url),
            'utf8',
          ),
        ),
      ),
    );
  const row = (html: string, cap: string) =>
    html.match(new RegExp(`<tr data-testid="budget-${cap}">(.*?)</tr>`))?.[1]?.match(/<td>[^<]*/g);

  it('each cap with its limit, spent and left; spend without a cap; who raised it, when', () => {
    const html = sessionPage({ timeline: budgeted(), status: 'idle', pending: [] });
    expect(row(html, 'totalTokens')).toEqual(['<td>totalTokens', '<td>1000', '<td>450', '<td>550']);
    expect(row(html, 'costUsd')).toEqual(['<td>costUsd', '<td>—', '<td>$0.00009', '<td>—']);
    expect(html).toMatch(
      /<li data-testid="budget-raise">totalTokens 1000 by <b>alice@ops<\/b> at <time datetime="2026-12-05T00:59:30Z">/,
    );
  });

  it("escapes a raiser's identity, and shows nothing for a session without a budget", () => {
    const timeline = budgeted();
    timeline.budget!.raiseLog[0]!.identity = EVIL;
    const html = sessionPage({ timeline, status: 'idle', pending: [] });
    expect(html).toContain(`by <b>${ESCAPED}</b>`);
    expect(scripts(html)).not.toContain('<script>');
    expect(sessionPage({ timeline: demo(), status: 'idle', pending: [] })).not.toContain(
      'data-testid="budget"',
    );
  });
});

describe('relativeTime', () => {
  const now = Date.UTC(2026, 11, 3, 12, 0, 0);
  const s = 1000;
  const h = 3600 * s;
  it('says how far a deadline is in whole units, rounded down', () => {
    expect(relativeTime(now + 24 * h - 5 * s, now)).toBe('in 23 h');
    expect(relativeTime(now + 24 * h, now)).toBe('in 24 h');
    expect(relativeTime(now + 90 * s, now)).toBe('in 1 min');
    expect(relativeTime(now + 59 * s, now)).toBe('in 59 s');
    expect(relativeTime(now + 72 * h, now)).toBe('in 3 d');
  });

  it('says how long ago a past one was', () => {
    expect(relativeTime(now - 12 * 60 * s, now)).toBe('12 min ago');
  });
});
