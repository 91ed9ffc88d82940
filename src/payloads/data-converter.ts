/**
 * The data converter workers and clients of an agent share: Temporal's default payload
 * converter, with large payloads moved to the agent's payload store.
 *
 * @module
 */
import type { DataConverter } from '@temporalio/common';
import type { ResolvedAgentOptions } from '../agent/options.js';
import { payloadStoreCodec } from './codec.js';

/** The data converter for `options` (its payload store and offload threshold). */
export function dataConverterOf(
  options: Pick<ResolvedAgentOptions, 'payloadStore' | 'offloadPayloadBytes'>,
): DataConverter {
  return { payloadCodecs: [payloadStoreCodec(options.payloadStore, options.offloadPayloadBytes)] };
}
