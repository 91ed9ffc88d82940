/**
 * `durable-agent-sdk/stream`: the transports of `send()`'s live streams
 * (`advanced.stream.transport`): the embedded in-memory bus, Redis Streams for workers and
 * clients in different processes, and the interface a transport implements.
 *
 * @module durable-agent-sdk/stream
 */
export { memoryStreams, type MemoryStreamsOptions } from './memory.js';
export {
  redisStreams,
  type RedisStreamsOptions,
  type RedisStreamTransport,
  type RedisClientLike,
} from './redis.js';
export {
  isStreamTransport,
  type StreamEntry,
  type StreamKey,
  type StreamReadOptions,
  type StreamTransport,
} from './transport.js';
export type * from './events.js';
