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
 * @module durable-agent-sdk/codec-server
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { closeServer, listen } from '../server/http.js';
import type { PayloadCodec } from '@temporalio/common';
import { ConfigError } from '../common/errors.js';
import { DEFAULTS } from '../common/defaults.js';
import { encryptedCodecs } from '../payloads/data-converter.js';
import { encryptionCodec, type EncryptionKeyRing } from '../payloads/encryption.js';
import type { PayloadStore } from '../payloads/store.js';
import { serveRequest, type CodecHandler } from './handler.js';

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

const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
const MIN_TOKEN_CHARS = 16;

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
  const handler: CodecHandler = { codecsFor, checkToken, origins, maxBodyBytes };
  const server = createServer((request, response) => serveRequest(handler, request, response));
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
