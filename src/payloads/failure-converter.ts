/**
 * The failure converter of an agent with encryption on: Temporal's default, moving each
 * failure's message and stack trace into its `encodedAttributes` payload (the message left in
 * history reads `Encoded failure`), so the payload codec seals them like any other payload.
 *
 * Workers load this module into the workflow sandbox too (the bundle's
 * `failureConverterPath`): failures the workflow code makes itself, such as a hook's block
 * reason refusing a `send()`, are encoded there. It imports `@temporalio/common` only.
 *
 * @module
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** Temporal's failure converter with `encodeCommonAttributes: true`. */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
