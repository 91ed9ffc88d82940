/**
 * The agent's `advanced.stream` option: where send streams travel.
 *
 * @module
 */
import type { StreamTransport } from './transport.js';

/** `advanced.stream`: the agent's `advanced.stream` option. */
export interface StreamOptions {
  /**
   * Where the streams travel. The agent does not close a transport it was given: close it
   * (`await transport.close()`) after the agent's `shutdown()`.
   * @default the process's shared `memoryStreams()`
   */
  transport?: StreamTransport;
}
