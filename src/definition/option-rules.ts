/**
 * The field rules of the agent's and a session's options, read as tables: one rule a field,
 * each refusing a bad value with a message that names the option and the value given.
 *
 * @module
 */
import { z } from 'zod';
import { hookDispatchProblem } from '../common/hook-dispatch-mode.js';
import { ConfigError } from '../common/errors.js';
import {
  AGENT_NAME_RULE,
  AGENT_NAME_RULE_TEXT,
  VERSION_RULE,
  VERSION_RULE_TEXT,
} from '../common/identity.js';
import { PERMISSION_PRESETS } from '../common/permission.js';
import { permissionRulesProblems } from '../common/permission-rules.js';
import { isAgentModel } from '../models/model.js';
import { openKeyRing, type EncryptionKeyRing } from '../payloads/encryption.js';
import { isPayloadStore } from '../payloads/store.js';
import { isStreamTransport } from '../stream/transport.js';
import { LOG_LEVELS, isAgentLogger, parseLogLevel } from '../temporal/logging.js';
import type { ToolDefinition } from '../tools/tool.js';
import { tracingProblem } from '../tracing/options.js';
import {
  checked,
  describeValue,
  ENV_NAME,
  fromProblem,
  hooksSchema,
  optionalString,
  positiveInt,
  rule,
  ruled,
  timeoutMs,
} from './rule-builders.js';
import { subagentsSchema } from './subagent-rules.js';
import { mcpServersSchema } from './mcp-rules.js';
import { agentBudgetsSchema, sessionBudgetsSchema } from './budget-rules.js';
import { approvalsSchema } from './approval-options.js';

const hookDispatchSchema = (path: string) =>
  fromProblem((value) => hookDispatchProblem(value, path));

const functionArray = (name: string) =>
  rule((value, issue) => {
    if (value === undefined) return;
    if (!Array.isArray(value) || value.some((f) => typeof f !== 'function')) {
      issue(
        `${name} must be an array of interceptor factories (functions), got ${describeValue(value)}`,
      );
    }
  });

// The fields with rules of their own, in the order of the tables.

/** `model`, the one field required. */
const modelSchema = z.unknown().superRefine((value, ctx) => {
  if (!(typeof value === 'string' && value !== '') && !isAgentModel(value)) {
    ctx.addIssue({
      code: 'custom',
      message: `model must be a model id such as 'gpt-4o' or a model object (e.g. scriptedModel([...])), got ${describeValue(value)}`,
    });
  }
});

const apiKeySchema = rule((value, issue) => {
  if (value === undefined) return;
  if (typeof value !== 'string') {
    issue(`apiKey must be a string, got ${describeValue(value)}`);
  } else if (value.trim() === '') {
    // Typically `apiKey: process.env.OPENAI_API_KEY!` with the variable set but empty.
    issue(
      "apiKey is empty: pass the provider's key (is the variable you read it from set?), " +
        'or leave apiKey out to read OPENAI_API_KEY or ANTHROPIC_API_KEY',
    );
  }
});

const toolsSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    issue('tools must be an array of tools (defineTool or built-ins)');
    return;
  }
  const names = new Set<string>();
  value.forEach((tool: unknown, i) => {
    const t = tool as Partial<ToolDefinition> | null;
    if (!t || typeof t.name !== 'string' || typeof t.execute !== 'function' || !t.inputSchema) {
      issue(`tools[${i}] is not a tool: it needs name, inputSchema, kind and execute`);
    } else if (names.has(t.name)) {
      issue(`tools has two tools named '${t.name}'`);
    } else if (!['readonly', 'write', 'execute'].includes(String(t.kind))) {
      issue(
        `tools[${i}] (${t.name}) has kind ${describeValue(t.kind)}; expected 'readonly', 'write' or 'execute'`,
      );
    } else names.add(t.name);
  });
});

const workspaceRootsSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.some((r) => typeof r !== 'string' || r === '')
  ) {
    issue('workspaceRoots must be a non-empty array of folder paths');
  }
});

const encryptionSchema = rule((value, issue) => {
  if (value === undefined || value === false || value === 'env') return;
  if (typeof value === 'function') return;
  if (typeof value !== 'object' || value === null) {
    issue(
      `encryption must be 'env', a key ring { currentKeyId, keys }, a function returning one, or false, got ${describeValue(value)}`,
    );
    return;
  }
  try {
    openKeyRing(value as EncryptionKeyRing);
  } catch (error) {
    issue(`encryption: ${(error as Error).message}`);
  }
});

const permissionSchema = rule((value, issue) => {
  if (value === undefined || typeof value === 'function') return;
  if (!(PERMISSION_PRESETS as readonly unknown[]).includes(value)) {
    issue(
      `advanced.permission must be a function or one of ${PERMISSION_PRESETS.map((p) => `'${p}'`).join(', ')}, got ${describeValue(value)}`,
    );
  }
});

const toolEnvSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(`advanced.toolEnv must be an object { allow?, set? }, got ${describeValue(value)}`);
    return;
  }
  const { allow, set, ...rest } = value as { allow?: unknown; set?: unknown };
  for (const key of Object.keys(rest)) {
    issue(`advanced.toolEnv has an unknown key '${key}' (keys: allow, set)`);
  }
  if (allow !== undefined) {
    if (!Array.isArray(allow)) {
      issue(
        `advanced.toolEnv.allow must be an array of variable names, got ${describeValue(allow)}`,
      );
    } else {
      allow.forEach((name: unknown, i) => {
        if (typeof name !== 'string' || !ENV_NAME.test(name)) {
          issue(
            `advanced.toolEnv.allow[${i}] must be a variable name ([A-Za-z_][A-Za-z0-9_]*), got ${describeValue(name)}`,
          );
        }
      });
    }
  }
  if (set !== undefined) {
    if (typeof set !== 'object' || set === null || Array.isArray(set)) {
      issue(`advanced.toolEnv.set must be an object of variable values, got ${describeValue(set)}`);
    } else {
      for (const [name, v] of Object.entries(set)) {
        if (!ENV_NAME.test(name)) {
          issue(
            `advanced.toolEnv.set has '${name}', which is not a variable name ([A-Za-z_][A-Za-z0-9_]*)`,
          );
        } else if (typeof v !== 'string') {
          issue(`advanced.toolEnv.set.${name} must be a string, got ${describeValue(v)}`);
        }
      }
    }
  }
});

const streamSchema = rule((value, issue) => {
  if (value === undefined || value === false) return;
  const transport = (value as { transport?: unknown } | null)?.transport;
  const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  if (
    typeof value !== 'object' ||
    value === null ||
    keys.some((key) => key !== 'transport') ||
    (transport !== undefined && !isStreamTransport(transport))
  ) {
    issue(
      `advanced.stream must be false or { transport? } with a StreamTransport (memoryStreams(), redisStreams({ url })), got ${describeValue(value)}`,
    );
  }
});

const offloadPayloadBytesSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1024 || value > 1_572_864) {
    issue(
      `advanced.offloadPayloadBytes must be an integer from 1024 to 1572864 (bytes), got ${describeValue(value)}`,
    );
  }
});

const logLevelSchema = rule((value, issue) => {
  if (value !== undefined && parseLogLevel(value) === undefined) {
    issue(
      `advanced.logLevel must be one of ${LOG_LEVELS.map((l) => `'${l}'`).join(', ')}, got ${describeValue(value)}`,
    );
  }
});

const PEM_KEYS = [
  'serverCaCert',
  'serverCaCertPath',
  'serverName',
  'clientCert',
  'clientCertPath',
  'clientKey',
  'clientKeyPath',
] as const;

const tlsSchema = rule((value, issue) => {
  if (value === undefined || typeof value === 'boolean') return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(
      `advanced.temporal.tls must be true, false or an object { serverCaCert(Path)?, serverName?, clientCert(Path)?, clientKey(Path)? }, got ${describeValue(value)}`,
    );
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    if (!(PEM_KEYS as readonly string[]).includes(key)) {
      issue(`advanced.temporal.tls has an unknown key '${key}' (keys: ${PEM_KEYS.join(', ')})`);
    } else if (v === undefined) {
      continue;
    } else if (key.endsWith('Path') || key === 'serverName') {
      if (typeof v !== 'string' || v === '') {
        issue(`advanced.temporal.tls.${key} must be a non-empty string, got ${describeValue(v)}`);
      }
    } else if (!(typeof v === 'string' && v !== '') && !(v instanceof Uint8Array)) {
      issue(
        `advanced.temporal.tls.${key} must be PEM text (a string or bytes; ${key}Path for a file), got ${describeValue(v)}`,
      );
    }
  }
});

const metadataSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issue(
      `advanced.temporal.metadata must be an object of header values, got ${describeValue(value)}`,
    );
    return;
  }
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string') {
      issue(`advanced.temporal.metadata['${key}'] must be a string, got ${describeValue(v)}`);
    }
  }
});

const pluginsSchema = rule((value, issue) => {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    issue(
      `advanced.temporal.plugins must be an array of Temporal plugins, got ${describeValue(value)}`,
    );
    return;
  }
  value.forEach((plugin: unknown, i) => {
    const name = (plugin as { name?: unknown } | null)?.name;
    if (typeof plugin !== 'object' || plugin === null || typeof name !== 'string') {
      issue(
        `advanced.temporal.plugins[${i}] is not a Temporal plugin (an object with a name and configureWorker, configureClient, ... methods), got ${describeValue(plugin)}`,
      );
    }
  });
});

const interceptorsSchema = z
  .strictObject({
    activity: functionArray('advanced.temporal.interceptors.activity'),
    workflowModules: rule((value, issue) => {
      if (value === undefined) return;
      if (!Array.isArray(value) || value.some((m) => typeof m !== 'string' || m === '')) {
        issue(
          `advanced.temporal.interceptors.workflowModules must be an array of module paths, got ${describeValue(value)}`,
        );
      }
    }),
    client: rule((value, issue) => {
      if (
        value !== undefined &&
        (typeof value !== 'object' || value === null || Array.isArray(value))
      ) {
        issue(
          `advanced.temporal.interceptors.client must be Temporal's ClientInterceptors ({ workflow?: [...], schedule?: [...] }, workflow an array), got ${describeValue(value)}`,
        );
      }
    }),
  })
  .optional();

// The tables: `advanced.temporal`, `advanced`, the agent's options, a session's options.

const temporalSchema = z
  .strictObject({
    address: optionalString('advanced.temporal.address'),
    embedded: z.unknown().optional(),
    workflowBundle: z.unknown().optional(),
    namespace: optionalString('advanced.temporal.namespace'),
    taskQueue: optionalString('advanced.temporal.taskQueue'),
    heartbeatIntervalMs: positiveInt('advanced.temporal.heartbeatIntervalMs'),
    dispatchHeartbeatTimeoutMs: timeoutMs('advanced.temporal.dispatchHeartbeatTimeoutMs'),
    modelHeartbeatTimeoutMs: checked(
      'advanced.temporal.modelHeartbeatTimeoutMs',
      (v) => Number.isInteger(v) && (v as number) >= 1_000 && (v as number) <= 3_600_000,
      'must be an integer from 1000 to 3600000 (the step heartbeats every 250 ms)',
    ),
    toolHeartbeatTimeoutMs: checked(
      'advanced.temporal.toolHeartbeatTimeoutMs',
      (v) => Number.isInteger(v) && (v as number) >= 1_000 && (v as number) <= 3_600_000,
      'must be an integer from 1000 to 3600000',
    ),
    shutdownGraceTimeMs: positiveInt('advanced.temporal.shutdownGraceTimeMs'),
    stickyQueueScheduleToStartTimeoutMs: positiveInt(
      'advanced.temporal.stickyQueueScheduleToStartTimeoutMs',
    ),
    maxConcurrentWorkflowTaskExecutions: checked(
      'advanced.temporal.maxConcurrentWorkflowTaskExecutions',
      (v) => Number.isInteger(v) && (v as number) >= 2 && (v as number) <= 10_000,
      'must be an integer from 2 to 10000',
    ),
    tls: tlsSchema,
    apiKey: optionalString('advanced.temporal.apiKey'),
    metadata: metadataSchema,
    profile: optionalString('advanced.temporal.profile'),
    configFile: optionalString('advanced.temporal.configFile'),
    envConfig: checked(
      'advanced.temporal.envConfig',
      (v) => typeof v === 'boolean',
      'must be true or false',
    ),
    plugins: pluginsSchema,
    interceptors: interceptorsSchema,
    runtime: checked(
      'advanced.temporal.runtime',
      (v) => v === 'if-absent' || v === 'never',
      "must be 'if-absent' or 'never'",
    ),
    workflowTaskTimeoutMs: positiveInt('advanced.temporal.workflowTaskTimeoutMs'),
    turnStatus: checked(
      'advanced.temporal.turnStatus',
      (v) => typeof v === 'boolean',
      'must be true or false',
    ),
    versioning: checked(
      'advanced.temporal.versioning',
      (v) => v === 'auto' || v === 'deployments' || v === 'off',
      "must be 'auto', 'deployments' or 'off'",
    ),
  })
  .optional();

const advancedSchema = z
  .strictObject({
    hooks: hooksSchema('advanced.hooks'),
    hookTimeoutMs: timeoutMs('advanced.hookTimeoutMs'),
    sessionEndHookTimeoutMs: timeoutMs('advanced.sessionEndHookTimeoutMs'),
    hookDispatch: hookDispatchSchema('advanced.hookDispatch'),
    maxTurns: positiveInt('advanced.maxTurns'),
    idleTimeoutMs: timeoutMs('advanced.idleTimeoutMs'),
    permission: permissionSchema,
    permissionRules: rule((value, issue) => permissionRulesProblems(value).forEach(issue)),
    permissionTimeoutMs: timeoutMs('advanced.permissionTimeoutMs'),
    requireBoundApprovals: checked(
      'advanced.requireBoundApprovals',
      (v) => typeof v === 'boolean',
      'must be a boolean',
    ),
    approvals: approvalsSchema,
    toolTimeoutMs: timeoutMs('advanced.toolTimeoutMs'),
    maxToolOutputBytes: positiveInt('advanced.maxToolOutputBytes'),
    toolHookErrors: checked(
      'advanced.toolHookErrors',
      (v) => v === 'tool-error' || v === 'reject',
      "must be 'tool-error' or 'reject'",
    ),
    toolEnv: toolEnvSchema,
    modelTimeoutMs: timeoutMs('advanced.modelTimeoutMs'),
    maxContextTokens: positiveInt('advanced.maxContextTokens'),
    continueAsNewAfterPrompts: positiveInt('advanced.continueAsNewAfterPrompts'),
    payloadStore: checked(
      'advanced.payloadStore',
      isPayloadStore,
      'must have put(data) and get(ref) methods (e.g. fileStore(dir))',
    ),
    stream: streamSchema,
    offloadPayloadBytes: offloadPayloadBytesSchema,
    logger: checked(
      'advanced.logger',
      isAgentLogger,
      'must have debug, info, warn and error methods (e.g. console)',
    ),
    logLevel: logLevelSchema,
    subagents: subagentsSchema,
    budgets: agentBudgetsSchema,
    temporal: temporalSchema,
  })
  .optional();

/** The rules of `createAgent`'s options, a field each. */
export const agentSchema = z.strictObject({
  model: modelSchema,
  apiKey: apiKeySchema,
  baseUrl: optionalString('baseUrl'),
  name: ruled('name', AGENT_NAME_RULE, AGENT_NAME_RULE_TEXT),
  version: ruled('version', VERSION_RULE, VERSION_RULE_TEXT),
  tools: toolsSchema,
  mcpServers: mcpServersSchema,
  workspaceRoots: workspaceRootsSchema,
  encryption: encryptionSchema,
  tracing: fromProblem(tracingProblem),
  advanced: advancedSchema,
});

/** The rules of a session's options, a field each. */
export const sessionSchema = z.strictObject({
  sessionId: rule((value, issue) => {
    if (value === undefined) return;
    if (typeof value !== 'string' || value === '' || value.length > 200) {
      issue(
        `sessionId must be a string of 1 to 200 characters, got ${typeof value === 'string' ? `${value.length} characters` : describeValue(value)}`,
      );
    }
  }),
  hooks: hooksSchema('hooks'),
  hookDispatch: hookDispatchSchema('hookDispatch'),
  hookTimeoutMs: timeoutMs('hookTimeoutMs'),
  sessionEndHookTimeoutMs: timeoutMs('sessionEndHookTimeoutMs'),
  idleTimeoutMs: timeoutMs('idleTimeoutMs'),
  maxTurns: positiveInt('maxTurns'),
  resumeSessionId: optionalString('resumeSessionId'),
  permissionHandler: checked(
    'permissionHandler',
    (v) => typeof v === 'function',
    'must be a function',
  ),
  budgets: sessionBudgetsSchema,
  tenant: rule((value, issue) => {
    if (value === undefined) return;
    if (typeof value !== 'string' || value.length < 1 || value.length > 200) {
      issue(
        `tenant must be a string of 1 to 200 characters, got ${typeof value === 'string' ? `${value.length} characters` : describeValue(value)}`,
      );
    } else if (value.includes(':')) {
      // ':' ends the tenant in a shared budget's key (`tenant:acme:day`).
      issue(`tenant must not contain ':', got ${JSON.stringify(value)}`);
    }
  }),
});

/**
 * Check `value` against `schema`.
 * @throws {ConfigError} `Invalid <what>: ` and every problem found, `; `-separated.
 */
export function check(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const messages = parsed.error.issues.map((issue) =>
      issue.code === 'custom' ? issue.message : `${issue.path.join('.') || what}: ${issue.message}`,
    );
    throw new ConfigError(`Invalid ${what}: ${messages.join('; ')}`);
  }
}
