/** A value JSON can carry. */
export type JsonValue =
  string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A plain JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Why `value` is not JSON, as a path and a reason, or `undefined` when it is.
 * Rejects `undefined`, functions, symbols, bigints, non-finite numbers, class instances
 * other than plain objects and arrays, and cycles.
 */
export function whyNotJson(
  value: unknown,
  path = '$',
  seen: Set<object> = new Set(),
): string | undefined {
  if (value === null) return undefined;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value)
        ? undefined
        : `${path} is ${String(value)}, which JSON cannot carry`;
    case 'object': {
      if (seen.has(value)) return `${path} is a cycle`;
      seen.add(value);
      try {
        if (Array.isArray(value)) {
          for (let i = 0; i < value.length; i++) {
            const why = whyNotJson(value[i], `${path}[${i}]`, seen);
            if (why) return why;
          }
          return undefined;
        }
        if (!isPlainObject(value))
          return `${path} is a ${value.constructor?.name ?? 'non-plain'} object, not plain JSON`;
        for (const [key, item] of Object.entries(value)) {
          // JSON drops undefined properties, as JSON.stringify does; users spread optionals.
          if (item === undefined) continue;
          const why = whyNotJson(item, `${path}.${key}`, seen);
          if (why) return why;
        }
        return undefined;
      } finally {
        seen.delete(value);
      }
    }
    default:
      return `${path} is ${typeof value}, which JSON cannot carry`;
  }
}

/** Whether `value` is an object literal (or has a null prototype). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * JSON with object keys sorted (at every depth), so equal values give equal text: what the
 * definition's fingerprint and MCP tool digests hash. `'undefined'` for `undefined`.
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
              a < b ? -1 : a > b ? 1 : 0,
            ),
          )
        : v,
    ) ?? 'undefined'
  );
}
