/**
 * One request to a codec server: CORS and its preflight, the bearer token, the namespace's
 * codecs, and the payloads encoded or decoded, over the settings in a {@link CodecHandler}.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AgentSdkError, messageOf } from '../common/errors.js';
import { HttpError, operationOf, parsePayloads, payloadToJson, readBody, respond } from './wire.js';

/** Headers the Web UI sends to a codec server (and the CLI's `Authorization`). */
const ALLOWED_HEADERS = 'Authorization, Authorization-Extras, Content-Type, X-Namespace';

/** A codec server's settings, resolved and checked. */
export interface CodecHandler {
  /** The codecs of a namespace (`X-Namespace`), or `undefined` when it is not served. */
  readonly codecsFor: (namespace: string | undefined) => readonly PayloadCodec[] | undefined;
  /** Whether a bearer token lets the request through. */
  readonly checkToken: (token: string, request: IncomingMessage) => boolean | Promise<boolean>;
  /** The origins browsers may call from. */
  readonly origins: ReadonlySet<string>;
  /** Largest request body accepted, bytes. */
  readonly maxBodyBytes: number;
}

/** Answer one request; a failure is answered with its status, or a 500. */
export function serveRequest(
  handler: CodecHandler,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  handle(handler, request, response).catch((error: unknown) => {
    const failure =
      error instanceof HttpError ? error : new HttpError(500, `codec failed: ${messageOf(error)}`);
    if (!response.headersSent)
      respond(
        response,
        failure.status,
        { error: failure.message, ...failure.details },
        failure.headers,
      );
    else response.destroy();
  });
}

async function handle(
  handler: CodecHandler,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  allowOrigin(handler, request, response);
  if (request.method === 'OPTIONS') {
    answerPreflight(request, response);
    return;
  }
  const operation = operationOf(request.url ?? '/');
  if (!operation) throw new HttpError(404, 'not found: POST …/encode or …/decode');
  if (request.method !== 'POST') {
    throw new HttpError(405, `${request.method ?? '?'} not allowed: POST …/${operation}`, {
      Allow: 'POST, OPTIONS',
    });
  }
  if (!(await authorized(handler, request))) {
    throw new HttpError(401, 'a valid bearer token is required (Authorization: Bearer <token>)', {
      'WWW-Authenticate': 'Bearer realm="codec"',
    });
  }
  const namespaceHeader = request.headers['x-namespace'];
  const namespace = Array.isArray(namespaceHeader) ? namespaceHeader[0] : namespaceHeader;
  const codecs = handler.codecsFor(namespace);
  if (!codecs) {
    throw new HttpError(
      404,
      namespace ? `namespace '${namespace}' is not served here` : 'X-Namespace header is required',
    );
  }
  const payloads = parsePayloads(await readBody(request, handler.maxBodyBytes));
  const result = await runCodecs(codecs, operation, payloads);
  respond(response, 200, { payloads: result.map(payloadToJson) });
}

/** CORS: an allowed origin is echoed, with credentials; any other is refused (403). */
function allowOrigin(
  handler: CodecHandler,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const origin = request.headers.origin;
  if (origin !== undefined) {
    if (!handler.origins.has(origin)) {
      throw new HttpError(403, `origin ${origin} is not allowed (corsOrigins)`);
    }
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Allow-Credentials', 'true');
  }
  response.setHeader('Vary', 'Origin');
}

/** A preflight: never carries credentials, so it is answered without the token. */
function answerPreflight(request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
  response.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
  response.setHeader('Access-Control-Max-Age', '600');
  // Chrome's Private Network Access: a public UI (cloud.temporal.io) calling a codec
  // server on the user's machine or network.
  if (request.headers['access-control-request-private-network'] === 'true') {
    response.setHeader('Access-Control-Allow-Private-Network', 'true');
  }
  response.writeHead(204).end();
}

async function authorized(handler: CodecHandler, request: IncomingMessage): Promise<boolean> {
  const header = request.headers.authorization ?? '';
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  try {
    return (await handler.checkToken(match[1]!, request)) === true;
  } catch {
    return false;
  }
}

/**
 * Encode with `codecs` in order, or decode in reverse order.
 *
 * @throws {HttpError} 422 when a codec refuses the payloads with an SDK error.
 */
async function runCodecs(
  codecs: readonly PayloadCodec[],
  operation: 'encode' | 'decode',
  payloads: Payload[],
): Promise<Payload[]> {
  let result = payloads;
  try {
    if (operation === 'encode') {
      for (const codec of codecs) result = await codec.encode(result);
    } else {
      for (const codec of [...codecs].reverse()) result = await codec.decode(result);
    }
  } catch (error) {
    // The codec refused the payloads (a key this server lacks, a wrong key, a missing
    // stored payload): the client's fault or its data's, not the server's.
    if (error instanceof AgentSdkError) {
      const keyId = (error as { keyId?: unknown }).keyId;
      throw new HttpError(
        422,
        messageOf(error),
        {},
        {
          code: error.code,
          ...(typeof keyId === 'string' ? { keyId } : {}),
        },
      );
    }
    throw error;
  }
  return result;
}
