/**
 * A person's answer from the session page: the approve and deny forms, sent as the
 * `decidePermission` Update by a client whose identity names who answered, to the session
 * that asked (the page's, or a sub-agent it runs: `session.approve()` routes it).
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Client } from '@temporalio/client';
import { AgentSdkError, SessionClosedError, messageOf } from '../common/errors.js';
import { isPlainObject, type JsonObject } from '../common/json.js';
import { routeOfRequest } from '../client/pending-tree.js';
import { Session } from '../client/session.js';
import { describeDecidedRequest } from '../history/decided.js';
import { diffValues } from '../history/diff.js';
import { isCallTimeout } from '../temporal/query.js';
import type { UiContext } from './context.js';
import { HttpError, readBody, redirect } from './http.js';
import { sessionLink, sessionPath } from './pages.js';
import { bounded, find, pendingOf, readTimeline } from './reads.js';

/** The longest name a person may give, characters. */
const MAX_NAME_CHARS = 100;

export async function answer(
  ui: UiContext,
  request: IncomingMessage,
  response: ServerResponse,
  target: { session: string; requestId: string; verb: 'approve' | 'deny' },
): Promise<void> {
  const form = new URLSearchParams(await readBody(request));
  const found = await find(ui, target.session);
  const back = `${sessionLink(found.sessionId, 'back to the session')} · <a href="/inbox">Inbox</a>`;
  if (found.description.status.name !== 'RUNNING') {
    throw new HttpError(
      409,
      'Session closed',
      `session '${found.sessionId}' is closed (${found.description.status.name}): nothing was sent`,
      back,
    );
  }
  const edited = target.verb === 'approve' ? parseEditedInput(form.get('input'), back) : undefined;
  const name = nameOf(form.get('name'), back);
  const pending = await pendingOf(ui, found, true);
  const waiting = pending.find((r) => r.requestId === target.requestId);
  // A sub-agent's request was decided in the sub-agent's session: its history says how.
  const asker = routeOfRequest(found.sessionId, target.requestId) ?? found;
  const alreadyDecided = async (): Promise<never> => {
    const timeline = await readTimeline(ui, asker.workflowId, asker.sessionId);
    const toolUseId = form.get('toolUseId');
    throw new HttpError(
      409,
      'Not pending',
      describeDecidedRequest(timeline, {
        requestId: target.requestId,
        ...(toolUseId ? { toolUseId } : {}),
      }),
      back,
    );
  };
  if (!waiting) return alreadyDecided();
  const who = name !== undefined ? `ui:${name}` : ui.identity;
  // The digest of the call the page showed (a form from an older page has none: unbound).
  const bound = form.get('digest') ? { digest: form.get('digest')! } : {};
  const handle = clientAs(ui, who).workflow.getHandle(found.workflowId);
  const answering = new Session(found.sessionId, handle);
  try {
    await bounded(ui, () =>
      target.verb === 'approve'
        ? answering.approve(
            target.requestId,
            edited !== undefined && diffValues(waiting.input, edited) !== undefined
              ? { updatedInput: edited, ...bound }
              : bound,
          )
        : answering.deny(target.requestId, denyOptionsOf(form, bound)),
    );
  } catch (error) {
    if (error instanceof AgentSdkError && error.code === 'PERMISSION_REQUEST_NOT_FOUND') {
      return alreadyDecided();
    }
    const refused = digestRefused(error, back);
    if (refused) throw refused;
    if (error instanceof SessionClosedError) {
      throw new HttpError(409, 'Session closed', messageOf(error), back);
    }
    if (isCallTimeout(error)) {
      throw new HttpError(
        504,
        'Not applied yet',
        `the answer to ${target.requestId} was sent to session '${found.sessionId}' but not ` +
          `applied within ${Math.round(ui.timeoutMs / 1000)} s: it may still apply when a worker ` +
          'polls the session’s task queue; reload the session to see',
        back,
      );
    }
    throw error;
  }
  const done = target.verb === 'approve' ? 'approved' : 'denied';
  redirect(
    response,
    `${sessionPath(found.sessionId)}?notice=${done}&request=${encodeURIComponent(target.requestId)}&by=${encodeURIComponent(who)}`,
  );
}

/** The deny form's message, interrupt and the digest it carries, as `session.deny()` takes them. */
function denyOptionsOf(
  form: URLSearchParams,
  bound: { digest?: string },
): { message?: string; interrupt?: boolean; digest?: string } {
  return {
    ...(form.get('message') ? { message: form.get('message')! } : {}),
    ...(form.get('interrupt') ? { interrupt: true } : {}),
    ...bound,
  };
}

/**
 * The page's error for an answer refused over its digest: the call changed since the page
 * showed it (409), or the form's digest is malformed (400); `undefined` for any other error.
 */
function digestRefused(error: unknown, links: string): HttpError | undefined {
  if (error instanceof AgentSdkError && error.code === 'PERMISSION_DIGEST_MISMATCH') {
    return new HttpError(409, 'The call changed', `${messageOf(error)}; reload to see it`, links);
  }
  if (error instanceof TypeError && /digest must be/.test(error.message)) {
    return new HttpError(400, 'Bad digest', `${error.message}; nothing was sent`, links);
  }
  return undefined;
}

function clientAs(ui: UiContext, who: string): Client {
  let answeringClient = ui.answering.get(who);
  if (!answeringClient) {
    answeringClient = new Client({
      connection: ui.client.connection,
      namespace: ui.namespace,
      dataConverter: ui.client.options.dataConverter,
      interceptors: ui.client.options.interceptors,
      identity: who,
    });
    ui.answering.set(who, answeringClient);
  }
  return answeringClient;
}

/**
 * The approval form's input: absent or blank means as asked.
 * @throws {HttpError} 400 naming what is wrong: not JSON (with the parser's message), or not
 *   an object.
 */
function parseEditedInput(text: string | null, links: string): JsonObject | undefined {
  if (text === null || text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(
      400,
      'Bad edited input',
      `the edited input is not valid JSON: ${messageOf(error)}; nothing was sent`,
      links,
    );
  }
  if (!isPlainObject(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw new HttpError(
      400,
      'Bad edited input',
      `the edited input must be a JSON object (the tool's input, e.g. {"file_path": "a.txt"}), ` +
        `got ${kind}; nothing was sent`,
      links,
    );
  }
  return value as JsonObject;
}

/** The name a person gave, for the identity: trimmed, at most 100 characters, no controls. */
function nameOf(text: string | null, links: string): string | undefined {
  const name = text?.trim() ?? '';
  if (name === '') return undefined;
  // eslint-disable-next-line no-control-regex
  if (name.length > MAX_NAME_CHARS || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new HttpError(
      400,
      'Bad name',
      `your name must be at most ${MAX_NAME_CHARS} characters without control characters; nothing was sent`,
      links,
    );
  }
  return name;
}
