/**
 * A codec server: Temporal's remote codec protocol over HTTP, so the Temporal Web UI (and
 * `temporal workflow show --codec-endpoint`) show an encrypted agent's sessions decrypted to
 * the people allowed to read them, while the server keeps only ciphertext.
 *
 * Protocol (Temporal's): `POST …/decode` and `POST …/encode` with a `Payloads` message as
 * proto3 JSON, `{ "payloads": [{ "metadata": { "<key>": "<base64>" }, "data": "<base64>" }] }`,
 * answered in the same form. Only the last part of the path counts, so the endpoints may be
 * mounted under any prefix; a query string (the UI adds `?preserveStorageRefs=true`) is
 * ignored. The `X-Namespace` header (the UI and the CLI send it) selects the namespace's
 * codecs when codecs are given per namespace, or is checked against `namespaces`.
 *
 * Access: every POST needs `Authorization: Bearer <token>` (compared in constant time);
 * without it or with another token the answer is 401. Browsers reach it through CORS: an
 * origin of `corsOrigins` gets its preflight (`OPTIONS`) answered and
 * `Access-Control-Allow-Origin` set to itself, with credentials allowed (the UI's
 * "include cross-origin credentials") and the headers the UI sends allowed
 * (`Authorization`, `Authorization-Extras`, `Content-Type`, `X-Namespace`); any other
 * origin is refused (403).
 *
 * The Web UI sends the bearer token only with "Pass access token" on (`codec.passAccessToken`
 * in its server config), and then only to an `https://` endpoint: it sends the signed-in
 * user's access token. Behind such a UI, give `token` as a function that checks that token
 * (a JWT of your identity provider); for the CLI, a fixed token
 * (`temporal ... --codec-endpoint URL --codec-auth "Bearer <token>"`).
 *
 *     import { createCodecServer } from 'durable-agent-sdk/codec-server';
 *     const server = await createCodecServer({
 *       keys: keyRingFromEnv(),
 *       token: process.env.CODEC_TOKEN!,
 *       port: 8888,
 *       corsOrigins: ['http://localhost:8233'],
 *     });
 *     // temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8888
 *
 * `durable-agent codec-server` runs one from the environment (src/cli/README.md).
 *
 * @module
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeServer, listen } from '../server/http.js';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { AgentSdkError, ConfigError, messageOf } from '../common/errors.js';
import { DEFAULTS } from '../common/defaults.js';
import { encryptedCodecs } from '../payloads/data-converter.js';
import { encryptionCodec, type EncryptionKeyRing } from '../payloads/encryption.js';
import type { PayloadStore } from '../payloads/store.js';

export {
  ENCRYPTION_KEYS_VARIABLE,
  keyRingFromEnv,
  type EncryptionKeyRing,
} from '../payloads/encryption.js';

/**
 * Checks a bearer token: `true` lets the request through. Throwing counts as `false`.
 * @param token what followed `Bearer ` in the `Authorization` header (never empty).
 */
export type CodecTokenCheck = (
  token: string,
  request: IncomingMessage,
) => boolean | Promise<boolean>;

/** Options of {@link createCodecServer}. */
export interface CodecServerOptions {
  /**
   * The agent's key ring: the server decodes (and encodes) with the encryption codec and
   * the payload store's codec, in the agent's order. Give this or `codecs`.
   */
  keys?: EncryptionKeyRing;
  /**
   * With `keys`: the payload store offloaded payloads are read from (and written to, on
   * encode). @default none: references pass through as they are
   */
  payloadStore?: PayloadStore;
  /** With `keys` and `payloadStore`: the offload threshold, bytes. @default 262144 (the agent's) */
  offloadPayloadBytes?: number;
  /**
   * Codecs instead of `keys`, in data-converter order (decode runs them last to first): one
   * list for every namespace, or a list per namespace (a request for another namespace, or
   * without `X-Namespace`, gets 404).
   */
  codecs?: readonly PayloadCodec[] | Readonly<Record<string, readonly PayloadCodec[]>>;
  /**
   * Namespaces served (checked against `X-Namespace`; a request for another, or without the
   * header, gets 404). @default every namespace (or the keys of a per-namespace `codecs`)
   */
  namespaces?: readonly string[];
  /**
   * The bearer token every POST must carry, at least 16 characters (compared in constant
   * time), or a function that checks the token (e.g. a JWT from the UI's identity provider).
   */
  token: string | CodecTokenCheck;
  /** TCP port. @default 0 (a free port: read it from `port` of the result) */
  port?: number;
  /** Address to listen on. @default `127.0.0.1` */
  host?: string;
  /**
   * Origins browsers may call from, exactly as the browser sends them (scheme, host, port;
   * no path): the Web UI's, e.g. `http://localhost:8233` (the dev server's UI) or
   * `https://cloud.temporal.io`. @default none: no CORS (the CLI needs none)
   */
  corsOrigins?: readonly string[];
  /** Largest request body accepted, bytes (413 above). @default 8 MiB */
  maxBodyBytes?: number;
}

/** A running codec server. */
export interface CodecServer {
  /** `http://<host>:<port>`: the endpoint to configure in the UI or the CLI. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** Stop listening and close open connections. Idempotent. */
  close(): Promise<void>;
}

/** Headers the Web UI sends to a codec server (and the CLI's `Authorization`). */
const ALLOWED_HEADERS = 'Authorization, Authorization-Extras, Content-Type, X-Namespace';
const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
const MIN_TOKEN_CHARS = 16;

/** A request that gets an error answer. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/**
 * Start a codec server.
 *
 * @returns once it listens.
 * @throws {ConfigError} when neither or both of `keys` and `codecs` are given, the key ring
 *   is bad, `token` is missing or shorter than 16 characters, a CORS origin is not an
 *   origin (`scheme://host[:port]`), or `maxBodyBytes` is not a positive integer.
 * @throws what `node:http` throws when it cannot listen (a port in use: `EADDRINUSE`).
 */
export async function createCodecServer(options: CodecServerOptions): Promise<CodecServer> {
  const codecsFor = resolveCodecs(options);
  const checkToken = resolveTokenCheck(options.token);
  const origins = new Set((options.corsOrigins ?? []).map(checkOrigin));
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new ConfigError(`maxBodyBytes must be a positive integer, got ${String(maxBodyBytes)}`);
  }
  const host = options.host ?? '127.0.0.1';

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const failure =
        error instanceof HttpError
          ? error
          : new HttpError(500, `codec failed: ${messageOf(error)}`);
      if (!response.headersSent)
        respond(
          response,
          failure.status,
          { error: failure.message, ...failure.details },
          failure.headers,
        );
      else response.destroy();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const origin = request.headers.origin;
    if (origin !== undefined) {
      if (!origins.has(origin)) {
        throw new HttpError(403, `origin ${origin} is not allowed (corsOrigins)`);
      }
      response.setHeader('Access-Control-Allow-Origin', origin);
      response.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    response.setHeader('Vary', 'Origin');
    if (request.method === 'OPTIONS') {
      // A preflight: never carries credentials, so it is answered without the token.
      response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      response.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      response.setHeader('Access-Control-Max-Age', '600');
      // Chrome's Private Network Access: a public UI (cloud.temporal.io) calling a codec
      // server on the user's machine or network.
      if (request.headers['access-control-request-private-network'] === 'true') {
        response.setHeader('Access-Control-Allow-Private-Network', 'true');
      }
      response.writeHead(204).end();
      return;
    }
    const operation = operationOf(request.url ?? '/');
    if (!operation) throw new HttpError(404, 'not found: POST …/encode or …/decode');
    if (request.method !== 'POST') {
      throw new HttpError(405, `${request.method ?? '?'} not allowed: POST …/${operation}`, {
        Allow: 'POST, OPTIONS',
      });
    }
    if (!(await authorized(request))) {
      throw new HttpError(401, 'a valid bearer token is required (Authorization: Bearer <token>)', {
        'WWW-Authenticate': 'Bearer realm="codec"',
      });
    }
    const namespaceHeader = request.headers['x-namespace'];
    const namespace = Array.isArray(namespaceHeader) ? namespaceHeader[0] : namespaceHeader;
    const codecs = codecsFor(namespace);
    if (!codecs) {
      throw new HttpError(
        404,
        namespace
          ? `namespace '${namespace}' is not served here`
          : 'X-Namespace header is required',
      );
    }
    const payloads = parsePayloads(await readBody(request, maxBodyBytes));
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
    respond(response, 200, { payloads: result.map(payloadToJson) });
  }

  async function authorized(request: IncomingMessage): Promise<boolean> {
    const header = request.headers.authorization ?? '';
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
    if (!match) return false;
    try {
      return (await checkToken(match[1]!, request)) === true;
    } catch {
      return false;
    }
  }

  const { port, url } = await listen(server, host, options.port);
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close: () => (closing ??= closeServer(server)),
  };
}

function resolveCodecs(
  options: CodecServerOptions,
): (namespace: string | undefined) => readonly PayloadCodec[] | undefined {
  if ((options.keys === undefined) === (options.codecs === undefined)) {
    throw new ConfigError('createCodecServer needs one of keys (a key ring) or codecs');
  }
  const served = options.namespaces ? new Set(options.namespaces) : undefined;
  const allowed = (namespace: string | undefined) =>
    served === undefined || (namespace !== undefined && served.has(namespace));
  if (options.keys !== undefined) {
    const store = options.payloadStore;
    const codecs = store
      ? encryptedCodecs(options.keys, {
          payloadStore: store,
          offloadPayloadBytes: options.offloadPayloadBytes ?? DEFAULTS.offloadPayloadBytes,
        })
      : [encryptionCodec(options.keys)];
    return (namespace) => (allowed(namespace) ? codecs : undefined);
  }
  const given = options.codecs!;
  if (Array.isArray(given)) {
    const codecs = given as readonly PayloadCodec[];
    return (namespace) => (allowed(namespace) ? codecs : undefined);
  }
  const byNamespace = given as Readonly<Record<string, readonly PayloadCodec[]>>;
  return (namespace) =>
    namespace !== undefined && Object.hasOwn(byNamespace, namespace) && allowed(namespace)
      ? byNamespace[namespace]
      : undefined;
}

function resolveTokenCheck(token: CodecServerOptions['token']): CodecTokenCheck {
  if (typeof token === 'function') return token;
  if (typeof token !== 'string' || token.length < MIN_TOKEN_CHARS) {
    throw new ConfigError(
      `createCodecServer needs a token of at least ${MIN_TOKEN_CHARS} characters (or a function ` +
        'that checks one): the codec server hands out plaintext to whoever holds it',
    );
  }
  // Digests of equal length, so the comparison takes the same time whatever is sent.
  const expected = createHash('sha256').update(token).digest();
  return (given) => timingSafeEqual(createHash('sha256').update(given).digest(), expected);
}

function checkOrigin(origin: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (!parsed || parsed.origin !== origin) {
    throw new ConfigError(
      `corsOrigins entry '${origin}' is not an origin: scheme://host[:port], no path or ` +
        "trailing slash (e.g. 'http://localhost:8233')",
    );
  }
  return origin;
}

/** `encode` or `decode`, from the path's last part (any prefix, any query string). */
function operationOf(url: string): 'encode' | 'decode' | undefined {
  const path = url.split('?')[0]!.replace(/\/+$/, '');
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last === 'encode' || last === 'decode' ? last : undefined;
}

async function readBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw new HttpError(413, `request body over ${maxBytes} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function bytesOf(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) {
    throw new HttpError(400, `${where} must be base64 text`);
  }
  return Buffer.from(value, 'base64');
}

/** A `Payloads` message as proto3 JSON. */
function parsePayloads(body: string): Payload[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (error) {
    throw new HttpError(400, `body is not JSON: ${messageOf(error)}`);
  }
  const shape = 'body must be {"payloads": [{"metadata": {...}, "data": "..."}]}';
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HttpError(400, shape);
  }
  // proto3 JSON leaves an empty repeated field out: `{}` is a Payloads message with none (the
  // Temporal CLI sends it, and retries until its deadline on anything but an answer).
  const list = (parsed as { payloads?: unknown }).payloads ?? [];
  if (!Array.isArray(list)) throw new HttpError(400, shape);
  return list.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null) {
      throw new HttpError(400, `payloads[${index}] must be an object`);
    }
    const { metadata = {}, data } = item as { metadata?: unknown; data?: unknown };
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
      throw new HttpError(400, `payloads[${index}].metadata must be an object`);
    }
    const payload: Payload = { metadata: {} };
    for (const [key, value] of Object.entries(metadata)) {
      payload.metadata![key] = bytesOf(value, `payloads[${index}].metadata.${key}`);
    }
    if (data !== undefined && data !== null)
      payload.data = bytesOf(data, `payloads[${index}].data`);
    return payload;
  });
}

function payloadToJson(payload: Payload): { metadata: Record<string, string>; data?: string } {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    if (value) metadata[key] = Buffer.from(value).toString('base64');
  }
  return payload.data
    ? { metadata, data: Buffer.from(payload.data).toString('base64') }
    : { metadata };
}

function respond(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}
