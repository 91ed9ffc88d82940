/**
 * `durable-agent-sdk/server`: the embedded Temporal server and the Temporal CLI it runs on,
 * for programs that start a server themselves (tests, local tools). `createAgent` starts one
 * on its own when no address is configured; most programs never import this.
 *
 * @module durable-agent-sdk/server
 */
export { startDevServer, type DevServer, type DevServerOptions } from './dev-server.js';
export {
  ensureTemporalCli,
  defaultTemporalCacheDir,
  type EnsureTemporalCliOptions,
  type TemporalBinaries,
  type TemporalCliSource,
} from './temporal-cli.js';
