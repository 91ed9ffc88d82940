/**
 * The session page's HTML: the session list by status, one session as turns → hook
 * dispatches → each callback's decision → tools (with the diffs of what hooks and people
 * changed), and the inbox of pending approvals. Server-rendered; every value from a session
 * (prompts, tool inputs and outputs, reasons, identities: user and model content) goes
 * through {@link esc}. Pure.
 *
 * @module
 */
import type { PendingPermission } from '../common/permission.js';
import type {
  HistoryCallback,
  HistoryDispatch,
  HistoryPrompt,
  HistoryTimeline,
  HistoryToolCall,
  ValueDiff,
} from '../history/timeline-types.js';
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

const STATUS_TITLES: Record<SessionUiStatus, string> = {
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
interface AnswerIdentity {
  /** The identity recorded when the form carries no name (`SessionUiOptions.identity`). */
  fallback: string;
  /**
   * When the page is rendered, ms since epoch: the deadlines' "in 23 h" counts from it.
   * @default Date.now()
   */
  now?: number;
}

/** Escape text for HTML text and attribute values. */
function esc(value: unknown): string {
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
const UNNAMED: AnswerIdentity = { fallback: 'the page’s identity' };

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
function layout(title: string, body: string): string {
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

function time(ms: number | Date | undefined): string {
  if (ms === undefined) return '-';
  const date = ms instanceof Date ? ms : new Date(ms);
  if (Number.isNaN(date.getTime())) return '-';
  const iso = date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `<time datetime="${esc(iso)}">${esc(iso)}</time>`;
}

function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}

function badge(text: string, kind = text): string {
  return `<span class="badge b-${esc(kind.replace(/[^a-z_]/gi, ''))}">${esc(text)}</span>`;
}

function json(value: unknown): string {
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
function requestCard(entry: InboxEntry, who: AnswerIdentity): string {
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
    ? `<p>request <code data-testid="request-id">${esc(r.requestId)}</code>, ${esc(r.toolKind)} tool, asked ${time(r.askedAt)}, deadline ${time(r.deadline)} (<span data-testid="deadline-relative">${esc(relativeTime(r.deadline, now))}</span>)${
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
  const hidden = `<input type="hidden" name="toolUseId" value="${esc(r.toolUseId)}">
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

/** What the session page shows besides the timeline. */
interface SessionPageData {
  timeline: HistoryTimeline;
  status: SessionUiStatus;
  /** Requests of this session waiting for a person. */
  pending: readonly InboxEntry[];
  /** A line to show at the top (what an approval did). */
  notice?: string;
  /** The timelines of the sub-agents its `Task` calls started (and theirs), by session id. */
  subagents?: ReadonlyMap<string, HistoryTimeline>;
  /** Who answers from the page's forms. @default the page's own identity, unnamed */
  who?: AnswerIdentity;
}

/** A sub-agent's place: its path, and a link to the session whose `Task` call started it. */
function subagentFacts(t: SessionPageData['timeline']): string {
  const sub = t.subagent;
  if (!sub) return '';
  const parent = `<a data-testid="parent-session" href="${esc(sessionPath(sub.parentSessionId))}">${esc(sub.parentSessionId)}</a>`;
  return `<p class="facts" data-testid="subagent-of">sub-agent <b>${esc(sub.agentPath)}</b> of session ${parent}</p>\n`;
}

/** A `Task` call's sub-agent: its path, linked to its own page, and how it stands. */
function subagentLine(call: HistoryToolCall): string {
  const child = call.child;
  if (!child) return '';
  const calls =
    child.toolCalls !== undefined ? ` <small>${child.toolCalls} tool call(s)</small>` : '';
  return `<div class="line" data-testid="subagent" data-status="${esc(child.status)}">sub-agent <a href="${esc(
    sessionPath(child.sessionId),
  )}">${esc(child.agentPath)}</a> <small>${esc(child.status)}</small>${calls}</div>`;
}

/** A `Task` call's sub-agent's own turns, nested under the call (and theirs under theirs). */
function subagentTurns(
  call: HistoryToolCall,
  subagents: ReadonlyMap<string, HistoryTimeline>,
): string {
  const child = call.child;
  const t = child ? subagents.get(child.sessionId) : undefined;
  if (!child || !t) return '';
  const calls = new Map(t.toolCalls.map((c) => [c.toolUseId, c]));
  const turns = t.prompts.map((p, i) => turn(p, i, t, calls, subagents)).join('\n');
  return `<details class="subagent-turns" data-testid="subagent-turns" data-path="${esc(child.agentPath)}" open><summary>${esc(child.agentPath)}</summary>${turns}</details>`;
}

/** One session: its turns → hook dispatches → callbacks → tools. */
/** `, version v2, fingerprint …`: the version the session runs now (its last move's target). */
function versionFacts(t: SessionPageData['timeline']): string {
  const moved = t.upgrades?.at(-1);
  const version = moved?.toVersion ?? t.version;
  const fingerprint = moved?.toFingerprint ?? t.fingerprint;
  return `${version ? `, version <span data-testid="version">${esc(version)}</span>` : ''}${
    moved && t.version ? ` (started on ${esc(t.version)})` : ''
  }${fingerprint ? `, fingerprint ${esc(fingerprint)}` : ''}`;
}

export function sessionPage(data: SessionPageData): string {
  const t = data.timeline;
  const id = t.sessionId ?? t.workflowId ?? '?';
  const calls = new Map(t.toolCalls.map((c) => [c.toolUseId, c]));
  const inPrompt = new Set(t.prompts.flatMap((p) => p.dispatches));
  const firstPromptSeq = Math.min(...t.prompts.map((p) => p.dispatches[0] ?? Infinity));
  const outside = t.dispatches.filter((d) => !inPrompt.has(d.seq));
  const before = outside.filter((d) => t.prompts.length === 0 || d.seq < firstPromptSeq);
  const after = outside.filter((d) => !before.includes(d));
  const header = `<h1>Session <code data-testid="session-id">${esc(id)}</code> <span data-testid="session-status">${badge(
    STATUS_TITLES[data.status],
    data.status,
  )}</span></h1>
<p class="facts">agent ${esc(t.agentName ?? '?')}${versionFacts(t)} · Temporal status ${esc(t.status)} · started ${time(t.startedAt)}${
    t.closedAt !== undefined ? ` · closed ${time(t.closedAt)}` : ''
  }${t.endReason ? ` · end reason ${esc(t.endReason)}` : ''}${
    t.closeReason ? ` · ${esc(t.closeReason)}` : ''
  } · workflow <code>${esc(t.workflowId ?? '')}</code></p>
${subagentFacts(t)}${data.notice ? `<p class="notice" data-testid="notice">${esc(data.notice)}</p>` : ''}`;
  const pending = data.pending.length
    ? `<section class="pending"><h2>Waiting for you (${data.pending.length})</h2>${data.pending
        .map((e) => requestCard(e, data.who ?? UNNAMED))
        .join('\n')}</section>`
    : '';
  const turns = t.prompts.map((p, i) => turn(p, i, t, calls, data.subagents)).join('\n');
  const endNote = t.sessionEndMarker
    ? `<p>SessionEnd (${esc(t.sessionEndMarker.reason)}) at ${time(t.sessionEndMarker.at)}</p>`
    : '';
  return layout(
    `Session ${id}`,
    `${header}${pending}
${before.length ? `<section class="turn"><h2>Session start</h2>${before.map((d) => dispatch(d)).join('')}</section>` : ''}
${turns || '<p class="none">no prompts yet</p>'}
${after.length || endNote ? `<section class="turn"><h2>Session end</h2>${endNote}${after.map((d) => dispatch(d)).join('')}</section>` : ''}`,
  );
}

function turn(
  prompt: HistoryPrompt,
  index: number,
  t: HistoryTimeline,
  calls: ReadonlyMap<string, HistoryToolCall>,
  subagents: ReadonlyMap<string, HistoryTimeline> = new Map(),
): string {
  const byDispatch = new Map(t.dispatches.map((d) => [d.seq, d]));
  const items: string[] = [];
  const shown = new Set<string>();
  for (const seq of prompt.dispatches) {
    const d = byDispatch.get(seq);
    if (!d) continue;
    const call = d.toolUseId !== undefined ? calls.get(d.toolUseId) : undefined;
    if (call) {
      if (!shown.has(call.toolUseId)) {
        shown.add(call.toolUseId);
        items.push(toolCall(call, byDispatch, subagents));
      }
    } else {
      items.push(dispatch(d));
    }
  }
  for (const useId of prompt.toolCalls) {
    const call = calls.get(useId);
    if (call && !shown.has(useId)) items.push(toolCall(call, byDispatch, subagents));
  }
  const status = prompt.status ?? 'running';
  return `<section class="turn" data-testid="turn"><h2>Turn ${index + 1} ${badge(status)} <small>${time(prompt.acceptedAt)}${
    prompt.completedAt !== undefined ? `, ${duration(prompt.completedAt - prompt.acceptedAt)}` : ''
  }</small></h2>
<blockquote class="prompt" data-testid="prompt">${esc(prompt.prompt)}</blockquote>
${items.join('\n')}
${prompt.text !== undefined ? `<div class="answer" data-testid="answer"><b>${prompt.status === 'failed' ? 'failed' : 'answer'}:</b> ${esc(prompt.text)}</div>` : ''}</section>`;
}

function dispatch(d: HistoryDispatch): string {
  const callbacks = (d.callbacks ?? []).map(callback).join('');
  return `<div class="dispatch" data-testid="dispatch" data-event="${esc(d.event)}" data-decision="${esc(d.decision)}"${
    d.local ? ' data-local="true"' : d.inline ? ' data-inline="true"' : ''
  }>
<div class="line"><b>${esc(d.event)}</b>${d.toolName ? ` ${esc(d.toolName)}` : ''} ${badge(d.decision)} <small>${
    d.local ? 'local, ' : d.inline ? 'inline, ' : ''
  }${d.callbackCount} callback${
    d.callbackCount === 1 ? '' : 's'
  }${d.durationMs !== undefined ? `, ${duration(d.durationMs)}` : ''}, budget ${duration(d.budgetMs)}${
    d.refusals ? `, refused ${d.refusals}×` : ''
  }</small>${d.reason ? ` <span class="reason">${esc(d.reason)}</span>` : ''}${
    d.cleanup ? ` <small>cleanup ${esc(d.cleanup)}</small>` : ''
  }</div>${callbacks ? `<ol class="callbacks">${callbacks}</ol>` : ''}</div>`;
}

function callback(c: HistoryCallback): string {
  return `<li data-testid="callback" data-action="${esc(c.action)}">#${c.index + 1} ${badge(c.action)}${
    c.decided ? ' <small>decided</small>' : ''
  }${c.reason ? ` <span class="reason" data-testid="reason">${esc(c.reason)}</span>` : ''}${
    c.durationMs !== undefined ? ` <small>${duration(c.durationMs)}</small>` : ''
  }${c.inputDiff ? `<div class="edit">input: ${diff(c.inputDiff)}</div>` : ''}${
    c.outputDiff ? `<div class="edit">output: ${diff(c.outputDiff)}</div>` : ''
  }</li>`;
}

function toolCall(
  call: HistoryToolCall,
  byDispatch: ReadonlyMap<number, HistoryDispatch>,
  subagents: ReadonlyMap<string, HistoryTimeline>,
): string {
  const p = call.permission;
  const ask = p?.ask;
  const permission = p
    ? `<div class="permission" data-testid="permission">permission: ${esc(p.policy)} → ${badge(p.answer ?? 'pending')}${
        p.message ? ` <span class="reason">${esc(p.message)}</span>` : ''
      }${p.durationMs !== undefined ? ` <small>${duration(p.durationMs)}</small>` : ''}${
        p.inputDiff ? `<div class="edit">policy's edit: ${diff(p.inputDiff)}</div>` : ''
      }${
        ask
          ? `<div class="ask" data-testid="ask" data-outcome="${esc(ask.outcome)}">asked ${time(ask.askedAt)}, deadline ${time(ask.deadline)}: ${badge(ask.outcome)}${
              ask.by ? ` by <b data-testid="decided-by">${esc(ask.by)}</b>` : ''
            }${ask.waitedMs !== undefined ? ` after ${duration(ask.waitedMs)}` : ''}${
              ask.message
                ? ` <span class="reason" data-testid="denial">${esc(ask.message)}</span>`
                : ''
            }${ask.interrupt ? ' <small>(interrupt)</small>' : ''}${
              ask.inputDiff ? `<div class="edit">edited input: ${diff(ask.inputDiff)}</div>` : ''
            }</div>`
          : ''
      }</div>`
    : '';
  const r = call.result;
  const result = r
    ? `<div class="result" data-testid="result" data-status="${esc(r.status)}">result: ${badge(r.status)}${
        r.durationMs !== undefined ? ` <small>${duration(r.durationMs)}</small>` : ''
      }${r.sizeBytes !== undefined ? ` <small>${r.sizeBytes} B</small>` : ''}${
        r.truncated ? ' <small>truncated</small>' : ''
      }${r.offloaded ? ' <small>offloaded</small>' : ''}${r.summary ? ` ${esc(r.summary)}` : ''}${
        r.error ? ` <span class="reason">${esc(r.error.type)}: ${esc(r.error.message)}</span>` : ''
      }</div>`
    : '<div class="result" data-testid="result" data-status="none">not run</div>';
  const dispatches = call.dispatches
    .map((seq) => byDispatch.get(seq))
    .filter((d): d is HistoryDispatch => d !== undefined)
    .map(dispatch)
    .join('');
  return `<div class="tool" data-testid="tool-call" data-tool="${esc(call.toolName)}" id="call-${esc(call.toolUseId)}">
<div class="line"><b>tool ${esc(call.toolName)}</b> <small>${esc(call.toolUseId)}</small></div>
<details><summary>input</summary>${json(call.input ?? {})}</details>
${call.inputDiff ? `<div class="edit">ran with: ${diff(call.inputDiff)}</div>` : ''}
${dispatches}${permission}${result}${subagentLine(call)}${subagentTurns(call, subagents)}</div>`;
}

/** A {@link ValueDiff} as removed and added lines. */
function diff(d: ValueDiff): string {
  const lines: string[] = [];
  const del = (text: string) => lines.push(`<del>- ${esc(text)}</del>`);
  const ins = (text: string) => lines.push(`<ins>+ ${esc(text)}</ins>`);
  const show = (v: unknown) => JSON.stringify(v);
  switch (d.kind) {
    case 'text':
      for (const c of d.changes) (c.op === '-' ? del : ins)(c.text);
      break;
    case 'value':
      if (d.before !== undefined) del(show(d.before));
      if (d.after !== undefined) ins(show(d.after));
      break;
    case 'object':
      for (const c of d.changes) {
        lines.push(`<span class="key">${esc(c.key)}</span>`);
        if (c.lines) {
          for (const l of c.lines) (l.op === '-' ? del : ins)(l.text);
          continue;
        }
        if (c.change !== 'added') del(show(c.before));
        if (c.change !== 'removed') ins(show(c.after));
      }
      break;
  }
  return `<div class="diff" data-testid="diff">${lines.join('')}</div>`;
}
