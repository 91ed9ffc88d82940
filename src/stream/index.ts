/**
 * `durable-agent-sdk/stream`: the transports of `send()`'s live streams
 * (`advanced.stream.transport`): the embedded in-memory bus, and the interface a
 * cross-process transport implements.
 *
 * @module
 */
export { memoryStreams, type MemoryStreamsOptions } from './memory.js';
export {
  isStreamTransport,
  type StreamEntry,
  type StreamKey,
  type StreamReadOptions,
  type StreamTransport,
} from './transport.js';
export type * from './events.js';
