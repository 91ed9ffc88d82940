/**
 * The session page's routes: the token check (address, cookie or bearer), the origin check
 * of forms, and which handler answers which address.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UI_CSS, UI_JS } from './assets.js';
import { answer } from './answer.js';
import type { UiContext } from './context.js';
import { HttpError, decodePart, redirect, send, unauthorized } from './http.js';
import type { InboxEntry } from './pages.js';
import { sessionPage } from './session-page.js';
import {
  entriesOf,
  find,
  inbox,
  listPage,
  mayAsk,
  readSubagentTimelines,
  readTimeline,
  statusOf,
} from './reads.js';

/** How many levels of sub-agents a session page shows under its `Task` calls. */
const SUBAGENT_PAGE_DEPTH = 4;

/** Answer one request of the page. @throws {HttpError} what the page shows instead. */
export async function handle(
  ui: UiContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://ui.invalid');
  const method = request.method ?? 'GET';
  if (method === 'GET' && url.pathname === '/assets/ui.css') {
    return send(response, 200, UI_CSS, { 'Content-Type': 'text/css; charset=utf-8' });
  }
  if (method === 'GET' && url.pathname === '/assets/ui.js') {
    return send(response, 200, UI_JS, { 'Content-Type': 'text/javascript; charset=utf-8' });
  }
  const fromQuery = url.searchParams.get('token');
  if (fromQuery !== null) {
    if (!ui.tokenMatches(fromQuery))
      throw unauthorized('the token in the address is not this page’s');
    // Kept in a cookie; the address loses it (history, screenshots, Referer).
    url.searchParams.delete('token');
    response.setHeader(
      'Set-Cookie',
      `${ui.cookieName}=${encodeURIComponent(ui.token)}; HttpOnly; SameSite=Strict; Path=/`,
    );
    return redirect(response, `${url.pathname}${url.search}`);
  }
  if (!authorized(ui, request)) {
    throw unauthorized(
      'a valid token is required: open the address `durable-agent ui` printed (with ?token=), ' +
        'or send Authorization: Bearer <token>',
    );
  }
  if (method === 'POST') {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) {
      throw new HttpError(403, 'Refused', `a form from another origin (${origin}) is refused`);
    }
  }
  const parts = url.pathname.split('/').filter((p) => p !== '');
  if (parts.length === 0) return get(method, () => listPage(ui, response));
  if (parts[0] === 'inbox' && parts.length === 1) return get(method, () => inbox(ui, response));
  if (parts[0] === 'sessions' && parts.length === 2) {
    return get(method, () => session(ui, response, decodePart(parts[1]!), url.searchParams));
  }
  if (
    parts[0] === 'sessions' &&
    parts[2] === 'requests' &&
    parts.length === 5 &&
    (parts[4] === 'approve' || parts[4] === 'deny')
  ) {
    if (method !== 'POST')
      throw new HttpError(405, 'Method not allowed', `${method} not allowed: POST`);
    return answer(ui, request, response, {
      session: decodePart(parts[1]!),
      requestId: decodePart(parts[3]!),
      verb: parts[4],
    });
  }
  throw new HttpError(404, 'Not found', `no page at ${url.pathname}`);
}

function get(method: string, body: () => Promise<void>): Promise<void> {
  if (method !== 'GET' && method !== 'HEAD') {
    throw new HttpError(405, 'Method not allowed', `${method} not allowed: GET`);
  }
  return body();
}

function authorized(ui: UiContext, request: IncomingMessage): boolean {
  const bearer = /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  if (bearer) return ui.tokenMatches(bearer[1]!);
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== ui.cookieName) continue;
    try {
      return ui.tokenMatches(decodeURIComponent(part.slice(at + 1).trim()));
    } catch {
      return false;
    }
  }
  return false;
}

async function session(
  ui: UiContext,
  response: ServerResponse,
  target: string,
  query: URLSearchParams,
): Promise<void> {
  const found = await find(ui, target);
  const timeline = await readTimeline(ui, found.workflowId, found.sessionId);
  const subagents = await readSubagentTimelines(ui, timeline, SUBAGENT_PAGE_DEPTH);
  const status = statusOf(timeline);
  const pending = mayAsk(status, timeline)
    ? await entriesOf(ui, found, timeline)
    : ([] as InboxEntry[]);
  const notice = noticeOf(query);
  send(
    response,
    200,
    sessionPage({
      timeline,
      status,
      pending,
      subagents,
      who: { fallback: ui.identity },
      ...(notice ? { notice } : {}),
    }),
  );
}

/** The line an answer's redirect asks the session page to show. */
function noticeOf(query: URLSearchParams): string | undefined {
  const done = query.get('notice');
  const requestId = query.get('request');
  if ((done !== 'approved' && done !== 'denied') || !requestId) return undefined;
  const by = query.get('by');
  return `${done === 'approved' ? 'Approved' : 'Denied'} request ${requestId}${by ? ` as ${by}` : ''}${
    done === 'approved' ? ': the tool runs once the session’s worker picks it up' : ''
  }`;
}
