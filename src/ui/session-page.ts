/**
 * One session's page: its turns → hook dispatches → each callback's decision → tools (with
 * the diffs of what hooks and people changed), its sub-agents' turns nested under their
 * `Task` calls, and its requests waiting for a person. Built from the pieces of `pages.ts`;
 * every value from the session goes through {@link esc}. Pure.
 *
 * @module
 */
import { shortDigest } from '../common/approval-digest.js';
import { budgetSection } from './budget-section.js';
import type {
  HistoryCallback,
  HistoryDispatch,
  HistoryPrompt,
  HistoryTimeline,
  HistoryToolCall,
  ValueDiff,
} from '../history/timeline-types.js';
import {
  STATUS_TITLES,
  UNNAMED,
  badge,
  duration,
  esc,
  json,
  layout,
  requestCard,
  sessionPath,
  time,
  type AnswerIdentity,
  type InboxEntry,
  type SessionUiStatus,
} from './pages.js';

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

/** `, version v2, fingerprint …`: the version the session runs now (its last move's target). */
function versionFacts(t: SessionPageData['timeline']): string {
  const moved = t.upgrades?.at(-1);
  const version = moved?.toVersion ?? t.version;
  const fingerprint = moved?.toFingerprint ?? t.fingerprint;
  return `${version ? `, version <span data-testid="version">${esc(version)}</span>` : ''}${
    moved && t.version ? ` (started on ${esc(t.version)})` : ''
  }${fingerprint ? `, fingerprint ${esc(fingerprint)}` : ''}`;
}

/** One session: its turns → hook dispatches → callbacks → tools. */
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
    `${header}${pending}${budgetSection(t.budget)}
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
          ? `<div class="ask" data-testid="ask" data-outcome="${esc(ask.outcome)}">asked ${time(ask.askedAt)}${askStages(ask.stages)}, deadline ${time(ask.deadline)}: ${badge(ask.outcome)}${
              ask.by ? ` by <b data-testid="decided-by">${esc(ask.by)}</b>` : ''
            }${ask.waitedMs !== undefined ? ` after ${duration(ask.waitedMs)}` : ''}${
              ask.digest !== undefined && ask.bound !== false
                ? ` <small>digest <code data-testid="decided-digest">${esc(shortDigest(ask.digest))}</code>${
                    ask.updatedInputDigest
                      ? `, edited call's <code>${esc(shortDigest(ask.updatedInputDigest))}</code>`
                      : ''
                  }</small>`
                : ask.bound === false
                  ? ' <small data-testid="unbound">(unbound: no digest)</small>'
                  : ''
            }${
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

/** The stages of `advanced.approvals` an ask reached: `, reminded 12:02, escalated to ops 12:03`. */
function askStages(
  stages: readonly { stage: string; at: number; escalateTo?: string }[] | undefined,
): string {
  return (stages ?? [])
    .map(
      (s) =>
        `, <span data-testid="ask-stage">${esc(s.stage)}${
          s.escalateTo !== undefined ? ` to ${esc(s.escalateTo)}` : ''
        } ${time(s.at)}</span>`,
    )
    .join('');
}
