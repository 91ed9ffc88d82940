/**
 * How the CLI reads an agent's payloads: offloaded ones from `--payloads`, encrypted ones with
 * the key ring of `DURABLE_AGENT_ENCRYPTION_KEYS`; the codecs load on demand.
 *
 * @module
 */
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import type { History } from '@temporalio/common/lib/proto-utils.js';
import { DEFAULTS } from '../common/defaults.js';
import { AgentSdkError } from '../common/errors.js';
import { decodeHistoryPayloads } from '../history/decode.js';
import type { EncryptionKeyRing } from '../payloads/encryption.js';
import { CliError, oneLine } from './cli-error.js';
import type { CommandArgs } from './command-args.js';

/**
 * The data converter of the CLI's clients and replays: payloads a long session moved to its
 * payload store (references in history) are read back from `--payloads`, and encrypted ones
 * are opened with the key ring of `DURABLE_AGENT_ENCRYPTION_KEYS` (none set: an encrypted
 * payload is a clear error naming its key id).
 */
export async function payloadDataConverter(args: CommandArgs): Promise<DataConverter> {
  return { payloadCodecs: await historyCodecs(args) };
}

/** The codecs a history of an agent is read with (see {@link payloadDataConverter}). */
async function historyCodecs(args: CommandArgs): Promise<PayloadCodec[]> {
  const [{ encryptedCodecs }, { fileStore }] = await Promise.all([
    import('../payloads/data-converter.js'),
    import('../payloads/store.js'),
  ]);
  return encryptedCodecs(await keyRing(), {
    payloadStore: fileStore(args.payloads),
    offloadPayloadBytes: DEFAULTS.offloadPayloadBytes,
  });
}

/**
 * The key ring of `DURABLE_AGENT_ENCRYPTION_KEYS`, `undefined` when unset.
 * @throws {CliError} when the variable is malformed (naming the entry, never a key).
 */
export async function keyRing(): Promise<EncryptionKeyRing | undefined> {
  const { keyRingFromEnv } = await import('../payloads/encryption.js');
  try {
    return keyRingFromEnv(process.env);
  } catch (error) {
    throw new CliError(oneLine(error), { cause: error });
  }
}

/**
 * `history` with its payloads decoded (decrypted, offloaded ones read back), for the
 * readers that decode with the payload converter alone (timeline, golden).
 * @throws {CliError} naming `target` and the key id when a payload does not open, or the
 *   reference when a stored payload is missing.
 */
export async function decodedHistory(
  history: History,
  args: CommandArgs,
  target: string,
): Promise<History> {
  const codecs = await historyCodecs(args);
  try {
    return await decodeHistoryPayloads(history, codecs);
  } catch (error) {
    if (error instanceof AgentSdkError) {
      throw new CliError(`${target}: cannot read its payloads: ${oneLine(error)}`, {
        cause: error,
      });
    }
    throw error;
  }
}
