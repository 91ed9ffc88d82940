/**
 * The CLI's defaults and environment variables, named once: the parser, the help text and
 * the commands read them here.
 *
 * @module
 */

/** Default of `--timeout`: how long a command waits on the server and on a worker, ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Default of `--timeout` for `gate`, which reads many histories and runs callbacks, ms. */
export const GATE_TIMEOUT_MS = 120_000;

/** The default frontend address when neither `--address` nor `TEMPORAL_ADDRESS` is given. */
export const DEFAULT_ADDRESS = '127.0.0.1:7233';

/** Environment variable holding the bearer token of `codec-server`. */
export const CODEC_TOKEN_VARIABLE = 'DURABLE_AGENT_CODEC_TOKEN';

/** Environment variable holding the token of `ui` (a random one when unset). */
export const UI_TOKEN_VARIABLE = 'DURABLE_AGENT_UI_TOKEN';

/** Default `--port` of `ui` (next to the Temporal Web UI's 8233). */
export const DEFAULT_UI_PORT = 8234;

/** Default `--port` of `codec-server` (Temporal's samples' port). */
export const DEFAULT_CODEC_PORT = 8888;

/** Default `--cors-origin`s of `codec-server`: the dev server's UI, and Temporal Cloud's. */
export const DEFAULT_CORS_ORIGINS = [
  'http://localhost:8233',
  'http://127.0.0.1:8233',
  'https://cloud.temporal.io',
];

/**
 * The key ring's variable (`ENCRYPTION_KEYS_VARIABLE` of src/payloads/encryption.ts, not
 * imported: help and usage errors answer without loading Temporal's protobufs).
 */
export const KEYS_VARIABLE = 'DURABLE_AGENT_ENCRYPTION_KEYS';

/** Default of `--timeout` for `audit-export` and `audit-verify`, which read every run, ms. */
export const AUDIT_TIMEOUT_MS = 120_000;
