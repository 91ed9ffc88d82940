/**
 * `durable-agent codec-server`: Temporal's remote codec endpoint with the environment's key
 * ring, for the Web UI and the Temporal CLI, until a signal.
 *
 * @module
 */
import { CODEC_TOKEN_VARIABLE, DEFAULT_CODEC_PORT, DEFAULT_CORS_ORIGINS } from '../cli-defaults.js';
import { CliError, oneLine } from '../cli-error.js';
import type { CliOutput, CommandArgs } from '../command-args.js';
import { keyRing } from '../history-codecs.js';

/**
 * `codec-server`: the remote codec endpoint for the Web UI and the Temporal CLI, with the key
 * ring of the environment, until a signal.
 */
export async function codecServer(args: CommandArgs, io: CliOutput): Promise<number> {
  const ring = await keyRing();
  if (!ring) {
    throw new CliError(
      `codec-server needs the key ring: set DURABLE_AGENT_ENCRYPTION_KEYS (keyId:base64Key, comma-separated, the current key first)`,
    );
  }
  const token = process.env[CODEC_TOKEN_VARIABLE];
  if (!token) {
    throw new CliError(
      `codec-server needs a bearer token: set ${CODEC_TOKEN_VARIABLE} (at least 16 characters; ` +
        `e.g. node -e "console.log(crypto.randomBytes(24).toString('base64url'))")`,
    );
  }
  const [{ createCodecServer }, { fileStore }] = await Promise.all([
    import('../../codec-server/index.js'),
    import('../../payloads/store.js'),
  ]);
  const port = args.port ?? DEFAULT_CODEC_PORT;
  const corsOrigins = args.corsOrigins.length > 0 ? args.corsOrigins : DEFAULT_CORS_ORIGINS;
  let server;
  try {
    server = await createCodecServer({
      keys: ring,
      payloadStore: fileStore(args.payloads),
      token,
      port,
      host: args.host ?? '127.0.0.1',
      corsOrigins,
      namespaces: [args.namespace],
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE') {
      throw new CliError(`port ${port} is in use: pass another --port`, { cause: error });
    }
    throw new CliError(oneLine(error), { cause: error });
  }
  io.out(`codec server: ${server.url} (namespace ${args.namespace})`);
  io.out(`key ids: ${Object.keys(ring.keys).join(', ')} (current: ${ring.currentKeyId})`);
  io.out(`CORS origins: ${corsOrigins.join(', ')}`);
  io.out(`Web UI: temporal server start-dev --ui-codec-endpoint ${server.url}`);
  io.out(
    `CLI: temporal workflow show --workflow-id <id> --codec-endpoint ${server.url} --codec-auth "Bearer $${CODEC_TOKEN_VARIABLE}"`,
  );
  io.out('Press Ctrl-C to stop.');
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const signal = await new Promise<string>((resolveSignal) => {
    for (const s of signals) process.once(s, () => resolveSignal(s));
  });
  io.err(`stopping (${signal}) ...`);
  await server.close();
  return 0;
}
