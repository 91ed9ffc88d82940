/**
 * The session page's HTML: the layout and the pieces every page is made of, the session list
 * by status, and the inbox of pending approvals (one session's page is `session-page.ts`).
 * Server-rendered; every value from a session (prompts, tool inputs and outputs, reasons,
 * identities: user and model content) goes through {@link esc}. Pure.
 *
 * @module
 */
import type { PendingPermission } from '../common/permission.js';
import { shortDigest } from '../common/approval-digest.js';
import type { HistoryToolCall } from '../history/timeline-types.js';
import type { SessionEndStatus } from '../client/session-status.js';

/**
 * A session's status on the page: while its workflow execution runs, derived from its
 * history: `awaiting_approval` (a tool call waits for a person), `running` (a prompt or a
 * dispatch is in progress), `idle` (open, nothing in progress); once it does not, `closed`
 * (it completed: the session closed itself) or how Temporal ended it (`terminated`,
 * `timed_out`, `failed`, `canceled`, `continued_as_new`: an earlier run of a session that
 * rolled over).
 */
export type SessionUiStatus =
  'awaiting_approval' | 'running' | 'idle' | 'closed' | SessionEndStatus;

/** The statuses in the order the list shows them. */
const STATUS_ORDER: readonly SessionUiStatus[] = [
  'awaiting_approval',
  'running',
  'idle',
  'closed',
  'terminated',
  'timed_out',
  'failed',
  'canceled',
  'continued_as_new',
];

/** Groups the list shows even when empty; the others only when a session is in them. */
const ALWAYS_SHOWN = new Set<SessionUiStatus>(['awaiting_approval', 'running', 'idle', 'closed']);

export const STATUS_TITLES: Record<SessionUiStatus, string> = {
  awaiting_approval: 'Awaiting approval',
  running: 'Running',
  idle: 'Idle',
  closed: 'Closed',
  terminated: 'Terminated',
  timed_out: 'Timed out',
  failed: 'Failed',
  canceled: 'Canceled',
  continued_as_new: 'Continued as new',
};

/** One row of the session list. */
export interface SessionRow {
  sessionId: string;
  workflowId: string;
  status: SessionUiStatus;
  /** Temporal's execution status (`RUNNING`, `COMPLETED`, ...). */
  temporalStatus: string;
  agentName?: string;
  startTime: Date;
  closeTime?: Date;
  /** Prompts in the current run's history (running sessions). */
  prompts?: number;
  /** `Write NOTES.md` of each call waiting for a person. */
  waiting?: string[];
  /** Why the history could not be read (a key the ring lacks, ...). */
  error?: string;
}

/** One entry of the inbox: a request waiting for a person. */
export interface InboxEntry {
  /** The session listed, through which the forms answer (a sub-agent's request included). */
  sessionId: string;
  /**
   * The request as the workers list it (absent when no worker answered); its `sessionId`
   * and `agentPath` name the sub-agent that asks, when one does.
   */
  request?: PendingPermission;
  /** The waiting call from the history (tool, input), when the worker did not answer. */
  call?: HistoryToolCall;
  /** Why it cannot be decided now (no worker answered), when so. */
  unavailable?: string;
  /** The session's agent, from its history. */
  agentName?: string;
  /** The prompt whose turn made the call, from the history. */
  prompt?: string;
  /**
   * Keys of the input the person is asked about that the model did not give: a PreToolUse
   * callback's `modifiedInput` added them (`callback` is its 1-based number).
   */
  hookAddedKeys?: Array<{ key: string; callback: number }>;
}

/**
 * Who answers from a page, as the forms show it: `ui:<name>` with the name of the page's
 * tab, else `fallback`. The page's script fills the name in as the person types it.
 */
export interface AnswerIdentity {
  /** The identity recorded when the form carries no name (`SessionUiOptions.identity`). */
  fallback: string;
  /**
   * When the page is rendered, ms since epoch: the deadlines' "in 23 h" counts from it.
   * @default Date.now()
   */
  now?: number;
}

/** Escape text for HTML text and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The path of a session's page. */
export function sessionPath(sessionId: string): string {
  return `/sessions/${encodeURIComponent(sessionId)}`;
}

/** What the forms say of who answers when the page's own identity is not given. */
export const UNNAMED: AnswerIdentity = { fallback: 'the page’s identity' };

/**
 * `in 23 h`, `in 5 min`, `in 40 s`, `in 3 d` (two days and more); `12 min ago` once past.
 * Whole units, rounded down: `in 23 h` until a full day is left.
 */
export function relativeTime(at: number, now: number): string {
  const ms = at - now;
  const seconds = Math.floor(Math.abs(ms) / 1000);
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const span =
    seconds < 60
      ? `${seconds} s`
      : minutes < 60
        ? `${minutes} min`
        : hours < 48
          ? `${hours} h`
          : `${Math.floor(hours / 24)} d`;
  return ms < 0 ? `${span} ago` : `in ${span}`;
}

/** A whole page: the layout, the nav, `body`. */
export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · durable-agent</title>
<link rel="stylesheet" href="/assets/ui.css">
<script src="/assets/ui.js" defer></script>
</head><body>
<nav><a href="/">Sessions</a> <a href="/inbox">Inbox</a>
<label class="who">your name <input id="ui-name" data-testid="name" autocomplete="off" placeholder="recorded with your answers"></label></nav>
<main>
${body}
</main></body></html>`;
}

/** A page saying what went wrong (404, 409, 400, ...). */
export function messagePage(title: string, message: string, links: string): string {
  return layout(
    title,
    `<h1>${esc(title)}</h1><p class="error" data-testid="error">${esc(message)}</p><p>${links}</p>`,
  );
}

/** A link to a session page. */
export function sessionLink(sessionId: string, text = sessionId): string {
  return `<a href="${esc(sessionPath(sessionId))}">${esc(text)}</a>`;
}

export function time(ms: number | Date | undefined): string {
  if (ms === undefined) return '-';
  const date = ms instanceof Date ? ms : new Date(ms);
  if (Number.isNaN(date.getTime())) return '-';
  const iso = date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `<time datetime="${esc(iso)}">${esc(iso)}</time>`;
}

export function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

export function badge(text: string, kind = text): string {
  return `<span class="badge b-${esc(kind.replace(/[^a-z_]/gi, ''))}">${esc(text)}</span>`;
}

export function json(value: unknown): string {
  return `<pre class="json">${esc(JSON.stringify(value, null, 2))}</pre>`;
}

/** The session list, grouped by status. */
export function sessionListPage(rows: readonly SessionRow[], namespace: string): string {
  const groups = STATUS_ORDER.flatMap((status) => {
    const group = rows.filter((r) => r.status === status);
    if (group.length === 0 && !ALWAYS_SHOWN.has(status)) return [];
    const items = group
      .map(
        (r) => `<tr data-testid="session-row" data-session="${esc(r.sessionId)}">
<td>${sessionLink(r.sessionId)}</td><td>${esc(r.agentName ?? '')}</td>
<td>${badge(STATUS_TITLES[r.status], r.status)} ${r.status === 'closed' ? esc(r.temporalStatus) : ''}
${r.waiting?.length ? `<span class="waiting">waiting: ${esc(r.waiting.join(', '))}</span>` : ''}
${r.error ? `<span class="error">${esc(r.error)}</span>` : ''}</td>
<td>${r.prompts ?? ''}</td><td>${time(r.startTime)}</td><td>${time(r.closeTime)}</td></tr>`,
      )
      .join('\n');
    return `<section data-testid="status-${status}"><h2>${STATUS_TITLES[status]} (${group.length})</h2>
${
  group.length === 0
    ? '<p class="none">none</p>'
    : `<table><thead><tr><th>session</th><th>agent</th><th>status</th><th>prompts</th><th>started</th><th>closed</th></tr></thead><tbody>${items}</tbody></table>`
}</section>`;
  }).join('\n');
  return layout(
    'Sessions',
    `<h1>Sessions <small>namespace ${esc(namespace)}</small></h1>
${rows.length === 0 ? `<p class="none">no sessions in namespace ${esc(namespace)}</p>` : groups}`,
  );
}

/** The inbox: every request waiting for a person, across sessions. */
export function inboxPage(entries: readonly InboxEntry[], who: AnswerIdentity = UNNAMED): string {
  const body =
    entries.length === 0
      ? '<p class="none" data-testid="inbox-empty">no permission requests wait for a person</p>'
      : entries.map((e) => requestCard(e, who)).join('\n');
  return layout('Inbox', `<h1>Inbox <small>pending approvals</small></h1>\n${body}`);
}

/** One pending request, with its approve and deny forms (or why it cannot be decided now). */
export function requestCard(entry: InboxEntry, who: AnswerIdentity): string {
  const r = entry.request;
  const toolName = r?.toolName ?? entry.call?.toolName ?? '?';
  const input = r?.input ?? entry.call?.input ?? {};
  const head = `<h3>${esc(toolName)} ${
    r?.affectedPaths.length ? `<code>${esc(r.affectedPaths.join(', '))}</code>` : ''
  } <small>session ${sessionLink(entry.sessionId)}${
    entry.agentName ? `, agent <b data-testid="request-agent">${esc(entry.agentName)}</b>` : ''
  }${subagentOf(entry)}</small></h3>${
    entry.prompt !== undefined
      ? `<p class="asked-for">for the prompt <q data-testid="request-prompt">${esc(entry.prompt)}</q></p>`
      : ''
  }`;
  const now = who.now ?? Date.now();
  const facts = r
    ? `<p>request <code data-testid="request-id">${esc(r.requestId)}</code>${
        r.digest !== undefined
          ? `, approval digest <code data-testid="request-digest" title="${esc(r.digest)}">${esc(shortDigest(r.digest))}</code>`
          : ''
      }, ${esc(r.toolKind)} tool, asked ${time(r.askedAt)}, deadline ${time(r.deadline)} (<span data-testid="deadline-relative">${esc(relativeTime(r.deadline, now))}</span>)${requestStage(r, now)}${
        r.message ? `<br>policy says: ${esc(r.message)}` : ''
      }</p>`
    : '';
  const added = entry.hookAddedKeys?.length
    ? `<p class="hook-added">added by a PreToolUse hook, not the model: ${entry.hookAddedKeys
        .map(
          (k) =>
            `<code class="hook-key" data-testid="hook-added" data-key="${esc(k.key)}">${esc(k.key)}</code> <small>(callback #${k.callback})</small>`,
        )
        .join(', ')}</p>`
    : '';
  if (!r) {
    return `<article class="request" data-testid="request">${head}
<p class="error">${esc(entry.unavailable ?? 'cannot be decided now')}</p>
<p>the model's input (the history's; hooks may have changed what is asked):</p>${json(input)}${added}</article>`;
  }
  const action = `${esc(sessionPath(entry.sessionId))}/requests/${esc(encodeURIComponent(r.requestId))}`;
  // The name travels in each form: the page's script sets it (and what the form shows) from
  // this tab's name when the page loads and as it is typed; nothing reads it at submit.
  // The digest binds the answer to the call this page shows: a call changed since is refused.
  const hidden = `<input type="hidden" name="toolUseId" value="${esc(r.toolUseId)}">${
    r.digest !== undefined ? `\n<input type="hidden" name="digest" value="${esc(r.digest)}">` : ''
  }
<input type="hidden" name="name" class="name-field">`;
  const answerAs = `<p class="answer-as-line">you answer as <b class="answer-as" data-testid="answer-as" data-fallback="${esc(
    who.fallback,
  )}">${esc(who.fallback)}</b> <small>(your name, top right)</small></p>`;
  return `<article class="request" data-testid="request" data-tool="${esc(toolName)}" data-request="${esc(r.requestId)}">${head}${facts}${answerAs}
<form method="post" action="${action}/approve" class="approve">${hidden}
<label>input (edit to approve with a changed input; a JSON object)
<textarea name="input" rows="${Math.min(16, JSON.stringify(input, null, 2).split('\n').length + 1)}" data-testid="approve-input">${esc(
    JSON.stringify(input, null, 2),
  )}</textarea></label>${added}
<button type="submit" data-testid="approve">Approve</button></form>
<form method="post" action="${action}/deny" class="deny">${hidden}
<label>message to the model <input name="message" data-testid="deny-message" placeholder="why not"></label>
<label><input type="checkbox" name="interrupt" value="1"> also stop the prompt</label>
<button type="submit" data-testid="deny">Deny</button></form></article>`;
}

/** Which sub-agent asks, when one of the session's does: its path, linking to its session. */
function subagentOf(entry: InboxEntry): string {
  const r = entry.request;
  if (r?.sessionId === undefined || r.sessionId === entry.sessionId) return '';
  return `, sub-agent <b data-testid="request-path">${esc(r.agentPath ?? r.sessionId)}</b> (${sessionLink(
    r.sessionId,
    'its session',
  )})`;
}

/**
 * A request's stage under `advanced.approvals` for the inbox: `; reminded, next stage in 5 min`,
 * `; escalated to ops, deadline in 1 h`; empty without stages.
 */
function requestStage(
  r: { stage?: string; escalateTo?: string; nextStageAt?: number; deadline: number },
  now: number,
): string {
  if (r.stage === undefined) return '';
  const to = r.stage === 'escalated' && r.escalateTo !== undefined ? ` to ${r.escalateTo}` : '';
  const next =
    r.nextStageAt === undefined
      ? ''
      : `, ${r.nextStageAt >= r.deadline ? 'deadline' : 'next stage'} ${relativeTime(r.nextStageAt, now)}`;
  return `; <span data-testid="request-stage" data-stage="${esc(r.stage)}">${esc(r.stage)}${esc(to)}${esc(next)}</span>`;
}
