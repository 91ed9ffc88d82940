/**
 * The session page's HTTP plumbing: its error answer (`HttpError`), the security headers of
 * every answer, reading a form, and the small helpers the handlers share.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { messageOf, type AgentSdkError } from '../common/errors.js';

/** The largest form the page reads, bytes. */
const MAX_BODY_BYTES = 1024 * 1024;

/** An answer other than the page asked for (a 401, a 404 page, ...). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    message: string,
    readonly links = '<a href="/">Sessions</a> · <a href="/inbox">Inbox</a>',
  ) {
    super(message);
  }
}

/** A session whose payloads do not open (a key the ring lacks, a missing stored payload). */
export function unreadable(sessionId: string, error: AgentSdkError): HttpError {
  return new HttpError(
    422,
    'Cannot read this session',
    `session '${sessionId}': cannot read its payloads: ${messageOf(error)} ` +
      '(the CLI reads them with DURABLE_AGENT_ENCRYPTION_KEYS and --payloads)',
  );
}

export function unauthorized(message: string): HttpError {
  return new HttpError(401, 'Token required', message, '');
}

export function decodePart(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new HttpError(400, 'Bad address', `'${part}' is not a valid address part`);
  }
}

export async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      throw new HttpError(413, 'Too large', `the form is over ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `items` mapped by `fn`, at most `limit` at a time, in order. */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  });
  await Promise.all(workers);
  return results;
}

const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  // Not no-referrer: Chromium then posts forms with `Origin: null`, which the origin check refuses.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export function send(
  response: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    ...SECURITY_HEADERS,
    ...headers,
  });
  response.end(body);
}

export function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { Location: location, ...SECURITY_HEADERS });
  response.end();
}
