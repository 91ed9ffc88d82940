/**
 * The rules of `mcpServers`: each server's name and its configuration, refused with a
 * message that names the server, the field and the value given.
 *
 * @module
 */
import { ENV_NAME, describeValue, rule, type Issue } from './rule-builders.js';

/** A server's name: what its tools' names (`mcp__<server>__<tool>`) carry. */
const SERVER_NAME_RULE = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;
const SERVER_NAME_RULE_TEXT =
  "1 to 64 letters, digits, '-' or single '_' (no '__', no '_' at either end)";
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const STDIO_FIELDS = ['type', 'command', 'args', 'env', 'cwd'];
const HTTP_FIELDS = ['type', 'url', 'headers'];

/** Problems of a map of names to strings (`env`, `headers`). */
function stringMap(value: unknown, path: string, keyRule: RegExp, what: string, issue: Issue) {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(`${path} must be an object of ${what} to strings, got ${describeValue(value)}`);
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    if (!keyRule.test(key)) issue(`${path} has '${key}', which is not a ${what}`);
    if (typeof v !== 'string') issue(`${path}.${key} must be a string, got ${describeValue(v)}`);
  }
}

function unknownFields(config: object, allowed: string[], path: string, issue: Issue) {
  for (const key of Object.keys(config)) {
    if (!allowed.includes(key)) {
      issue(`${path} has an unknown field '${key}' (known: ${allowed.join(', ')})`);
    }
  }
}

function stdioProblems(config: Record<string, unknown>, path: string, issue: Issue) {
  unknownFields(config, STDIO_FIELDS, path, issue);
  if (typeof config.command !== 'string' || config.command === '') {
    issue(`${path}.command must be a non-empty string, got ${describeValue(config.command)}`);
  }
  const { args, cwd } = config;
  if (args !== undefined && (!Array.isArray(args) || args.some((a) => typeof a !== 'string'))) {
    issue(`${path}.args must be an array of strings, got ${describeValue(args)}`);
  }
  if (cwd !== undefined && (typeof cwd !== 'string' || cwd === '')) {
    issue(`${path}.cwd must be a non-empty string, got ${describeValue(cwd)}`);
  }
  stringMap(config.env, `${path}.env`, ENV_NAME, 'variable name', issue);
}

function httpProblems(config: Record<string, unknown>, path: string, issue: Issue) {
  unknownFields(config, HTTP_FIELDS, path, issue);
  let url: URL | undefined;
  try {
    url = typeof config.url === 'string' ? new URL(config.url) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    issue(`${path}.url must be an http: or https: URL, got ${describeValue(config.url)}`);
  }
  stringMap(config.headers, `${path}.headers`, HEADER_NAME, 'header name', issue);
}

/** `mcpServers`: an object of server names to stdio or Streamable HTTP configurations. */
export const mcpServersSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(
      `mcpServers must be an object of server names to configurations, got ${describeValue(value)}`,
    );
    return;
  }
  for (const [name, config] of Object.entries(value)) {
    const path = `mcpServers.${name}`;
    if (name.length > 64 || !SERVER_NAME_RULE.test(name)) {
      issue(`mcpServers has a server named '${name}': a name is ${SERVER_NAME_RULE_TEXT}`);
    }
    if (typeof config !== 'object' || config === null || Array.isArray(config)) {
      issue(`${path} must be a server configuration object, got ${describeValue(config)}`);
      continue;
    }
    const fields = config as Record<string, unknown>;
    const type = fields.type ?? 'stdio';
    if (type === 'stdio') stdioProblems(fields, path, issue);
    else if (type === 'http') httpProblems(fields, path, issue);
    else {
      issue(
        `${path}.type must be 'stdio' (the default) or 'http' (Streamable HTTP), got ${describeValue(type)}` +
          (type === 'sse' ? ": MCP's SSE transport is deprecated; use 'http'" : ''),
      );
    }
  }
});
