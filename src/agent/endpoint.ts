/**
 * Where the agent's Temporal server is: the given address, `TEMPORAL_ADDRESS`, or an
 * embedded dev server started for the agent.
 *
 * @module
 */
import type { ResolvedAgentOptions } from '../definition/options.js';
import { shows } from '../temporal/logging.js';
import { startDevServer, type DevServer } from '../server/dev-server.js';

/** A Temporal frontend to talk to, and the embedded server when we started one. */
export interface TemporalEndpoint {
  address: string;
  namespace: string;
  /** Set when the agent started an embedded dev server; stopped with the agent. */
  server: DevServer | undefined;
}

/**
 * Resolve the endpoint, starting an embedded dev server when no address is configured.
 * The server's provisioning notes go to `options.logger` (stderr by default) at WARN.
 * @throws {EngineError} when the embedded server cannot be provisioned or started.
 */
export async function resolveEndpoint(options: ResolvedAgentOptions): Promise<TemporalEndpoint> {
  const { address, namespace, embedded } = options.temporal;
  if (address) return { address, namespace, server: undefined };
  const { logger, logLevel } = options;
  const server = await startDevServer({
    namespace,
    // Provisioning notes (a download, a build that takes minutes) explain a wait: WARN.
    ...(!shows('WARN', logLevel)
      ? { log: () => undefined }
      : logger
        ? { log: (line: string) => logger.warn(line, { component: 'embedded-server' }) }
        : {}),
    ...(embedded?.dbFilename ? { dbFilename: embedded.dbFilename } : {}),
    ...(embedded?.ui ? { ui: true } : {}),
    ...(embedded?.cacheDir ? { cacheDir: embedded.cacheDir } : {}),
  });
  return { address: server.address, namespace, server };
}
