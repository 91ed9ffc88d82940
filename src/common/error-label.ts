/**
 * A content-free label of an error, for telemetry that must not carry what the session
 * holds (prompts, tool inputs, hook reasons, model text): the error's class name and its
 * code (`code`, or a Temporal failure's `type`), never its message or stack. Used for span
 * statuses and recorded exceptions (issue 17: spans carry no content, which encryption would
 * otherwise seal in history only).
 *
 * @module
 */

/** `'<name> <code>'`, `'<name>'`, or `'Error'` for a value that is not an error. */
export function errorLabel(error: unknown): string {
  if (!(error instanceof Error)) return 'Error';
  const coded = error as Error & { code?: unknown; type?: unknown };
  const code =
    typeof coded.code === 'string' ? coded.code : typeof coded.type === 'string' ? coded.type : '';
  return code ? `${error.name} ${code}` : error.name;
}
