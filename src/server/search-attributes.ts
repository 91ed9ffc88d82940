/**
 * Registering the session search attributes through a connection's operator service, for the
 * servers the package starts without a `--search-attribute` flag (the time-skipping test
 * server) and the test run's server.
 *
 * @module
 */
import type { Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import proto from '@temporalio/proto';
import { SESSION_SEARCH_ATTRIBUTES } from '../common/search-attributes.js';

/**
 * Register every session search attribute in `namespace` (one that exists with the same type
 * is registered again without error).
 * @throws the server's error, e.g. when one exists with another type or the caller may not.
 */
export async function registerSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<void> {
  const { IndexedValueType } = proto.temporal.api.enums.v1;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      SESSION_SEARCH_ATTRIBUTES.map((key) => [
        key.name,
        key.type === SearchAttributeType.INT
          ? IndexedValueType.INDEXED_VALUE_TYPE_INT
          : key.type === SearchAttributeType.DOUBLE
            ? IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE
            : IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
}
