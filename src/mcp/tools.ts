/**
 * MCP tools as the agent sees them: their names (`mcp__<server>__<tool>`), their specs with
 * a digest that changes when the server changes the tool, and what changed. Pure.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { canonicalJson, isPlainObject, type JsonObject, type JsonValue } from '../common/json.js';
import { mcpToolName, type McpToolSpec } from '../common/mcp.js';

/** A tool as an MCP server lists it (`tools/list`); the SDK's `Tool` fits this shape. */
export interface McpToolInfo {
  /** The tool's name on its server. */
  name: string;
  /** What it does, for the model. */
  description?: string;
  /** JSON Schema of its arguments (an object schema). */
  inputSchema: Record<string, unknown>;
  /** Hints such as `readOnlyHint`, `destructiveHint`. */
  annotations?: Record<string, unknown>;
}

/**
 * The spec of `info`, a tool `server` listed. The schema and annotations are copied as JSON
 * (anything JSON cannot carry is dropped), so the spec is safe to record.
 */
export function mcpToolSpec(server: string, info: McpToolInfo): McpToolSpec {
  const description = typeof info.description === 'string' ? info.description : '';
  const inputSchema = asJsonObject(info.inputSchema) ?? { type: 'object' };
  const annotations = asJsonObject(info.annotations);
  const digest = createHash('sha256')
    .update(canonicalJson({ tool: info.name, description, inputSchema, annotations }))
    .digest('hex');
  return {
    name: mcpToolName(server, info.name),
    server,
    tool: info.name,
    description,
    inputSchema,
    ...(annotations !== undefined ? { annotations } : {}),
    kind: annotations?.['readOnlyHint'] === true ? 'readonly' : 'write',
    digest,
  };
}

/**
 * What differs between the tool a session recorded and the one its server offers now, for a
 * refusal's message, e.g. `mcp__fs__write changed: description; input schema (properties
 * added: mode; removed: force; changed: path)`. Says `unchanged` when the digests are equal.
 *
 * @param recorded The spec the session started with.
 * @param current The server's spec of the same tool now; `undefined` when it no longer lists it.
 */
export function describeToolChange(
  recorded: McpToolSpec,
  current: McpToolSpec | undefined,
): string {
  if (current === undefined) {
    return `${recorded.name}: server '${recorded.server}' no longer offers tool '${recorded.tool}'`;
  }
  if (current.digest === recorded.digest) return `${recorded.name} unchanged`;
  const changes: string[] = [];
  if (current.description !== recorded.description) changes.push('description');
  const schema = describeSchemaChange(recorded.inputSchema, current.inputSchema);
  if (schema !== undefined) changes.push(`input schema (${schema})`);
  const annotations = changedKeys(recorded.annotations ?? {}, current.annotations ?? {});
  if (annotations.length > 0) changes.push(`annotations (${annotations.join(', ')})`);
  return `${recorded.name} changed: ${changes.length > 0 ? changes.join('; ') : 'its digest'}`;
}

/** What changed in an object schema: properties added, removed, changed, and other keys. */
function describeSchemaChange(before: JsonObject, after: JsonObject): string | undefined {
  const was = propertiesOf(before);
  const is = propertiesOf(after);
  const added = Object.keys(is).filter((key) => !(key in was));
  const removed = Object.keys(was).filter((key) => !(key in is));
  const changed = Object.keys(is).filter(
    (key) => key in was && canonicalJson(was[key]) !== canonicalJson(is[key]),
  );
  const parts: string[] = [];
  if (added.length > 0) parts.push(`properties added: ${added.join(', ')}`);
  if (removed.length > 0) parts.push(`removed: ${removed.join(', ')}`);
  if (changed.length > 0) parts.push(`changed: ${changed.join(', ')}`);
  const others = changedKeys(before, after).filter((key) => key !== 'properties');
  if (others.length > 0) parts.push(`${others.join(', ')} changed`);
  return parts.length > 0 ? parts.join('; ') : undefined;
}

function propertiesOf(schema: JsonObject): JsonObject {
  const properties = schema['properties'];
  return isPlainObject(properties) ? (properties as JsonObject) : {};
}

/** Keys whose values differ between two objects (present in one only, or unequal), sorted. */
function changedKeys(before: JsonObject, after: JsonObject): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => canonicalJson(before[key]) !== canonicalJson(after[key])).sort();
}

/** `value` as a JSON value (a deep copy without what JSON cannot carry), or `undefined`. */
export function asJson(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}

function asJsonObject(value: unknown): JsonObject | undefined {
  const json = asJson(value);
  return isPlainObject(json) ? (json as JsonObject) : undefined;
}
