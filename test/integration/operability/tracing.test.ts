/**
 * Tracing end to end: a real OpenTelemetry Collector (the core collector with its OTLP/HTTP
 * receiver and the contrib file exporter, built from the Go module proxy by
 * scripts/otel-collector.ts) receives the agent's spans and Temporal's; everything asserted
 * here is read back from the collector's output file. The session has a PreToolUse hook that
 * blocks Bash and a permission policy that asks for Write, which the test approves.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createAgent, HookEvent, type Agent, type SendResponse } from '../../../src/index.js';
import { scriptedModel, toolCalls } from '../../../src/testing/index.js';
import { bundleWithExtras } from '../../../src/worker/workflow-code.js';
import { resolveTracing } from '../../../src/tracing/options.js';
import { acquireTracing } from '../../../src/tracing/tracing.js';
import { startCollector, type RunningCollector } from '../../../scripts/otel-collector.js';
import {
  pendingAsk,
  rawClient,
  temporalAddress,
  uniqueTaskQueue,
  waitFor,
} from '../../helpers/common.js';
import { tempDir } from '../../helpers/temp-dirs.js';

const workspace = tempDir('tracing-ws');
const out = tempDir('tracing-collector');
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'histories');

/** One span as the collector wrote it, attributes flattened. */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  serviceName: string;
}

type OtlpValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};
type OtlpAttribute = { key: string; value: OtlpValue };

function valueOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  return JSON.stringify(value);
}

function attributesOf(
  list: OtlpAttribute[] | undefined,
): Record<string, string | number | boolean> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));
}

/** Every span in the collector's file (one OTLP/JSON `ExportTraceServiceRequest` a line). */
function exportedSpans(file: string): ExportedSpan[] {
  if (!existsSync(file)) return [];
  const spans: ExportedSpan[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const request = JSON.parse(line) as {
      resourceSpans?: Array<{
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans?: Array<{
          spans?: Array<{
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            name: string;
            attributes?: OtlpAttribute[];
          }>;
        }>;
      }>;
    };
    for (const resourceSpans of request.resourceSpans ?? []) {
      const serviceName = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            attributes: attributesOf(span.attributes),
            serviceName,
          });
        }
      }
    }
  }
  return spans;
}

/** The names of `span`'s ancestors, nearest first, within the spans given. */
function ancestry(span: ExportedSpan, all: ExportedSpan[]): string[] {
  const byId = new Map(all.map((s) => [s.spanId, s]));
  const names: string[] = [];
  for (let at = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) {
    names.push(at.name);
    if (names.length > 50) break;
  }
  return names;
}

const HOOK_BUDGET_MS = 30_000;

describe('tracing to a real OpenTelemetry Collector', () => {
  let collector: RunningCollector;
  let agent: Agent | undefined;
  /** The collector's export file (OTLP/JSON lines). */
  let file = '';
  let spans: ExportedSpan[] = [];
  let sessionId = '';
  let workflowId = '';
  let first: SendResponse;
  let second: SendResponse;
  const firstRequestId = 'send-with-tools';
  const secondRequestId = 'send-plain';
  const refusedRequestId = 'send-refused';

  beforeAll(async () => {
    file = join(out, 'traces.jsonl');
    collector = await startCollector({ file });
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
    process.env.OTEL_SERVICE_NAME = 'tracing-test';
    const model = scriptedModel((request) => {
      if (request.requestId === secondRequestId) return 'plain answer';
      if (request.step === 0) {
        return toolCalls(
          ['Bash', { command: 'echo blocked' }],
          ['Write', { file_path: 'NOTES.md', content: 'approved note' }],
        );
      }
      return 'done';
    });
    agent = await createAgent({
      model,
      workspaceRoots: [workspace],
      // The standard variables name the collector and the service.
      tracing: true,
      advanced: {
        hookTimeoutMs: HOOK_BUDGET_MS,
        permission: (request) => (request.kind === 'readonly' ? 'allow' : 'ask'),
        hooks: {
          [HookEvent.SessionStart]: [async () => ({ action: 'continue' })],
          // The third prompt is refused: the send fails with the hook's reason, which the
          // failure's spans (Temporal's update spans, the client's send span) must not carry.
          [HookEvent.UserPromptSubmit]: [
            async (input) =>
              String(input.userPrompt).includes('refuse-me')
                ? { action: 'abort', reason: 'refused for SECRET-REASON-4711' }
                : { action: 'continue' },
          ],
          [HookEvent.PreToolUse]: [
            async (input) =>
              input.toolName === 'Bash'
                ? { action: 'abort', reason: 'no shell in this session' }
                : { action: 'continue' },
          ],
        },
        temporal: { address: temporalAddress(), taskQueue: uniqueTaskQueue('tracing') },
      },
    });
    const session = await agent.createSession();
    sessionId = session.id;
    workflowId = session.workflowId;
    const pending = session.send('write the notes', { requestId: firstRequestId });
    const requestId = await pendingAsk(session, 30_000, 'the ask for Write');
    await session.approve(requestId);
    first = await pending;
    second = await session.send('and now?', { requestId: secondRequestId });
    await expect(
      session.send('refuse-me SECRET-PROMPT-4711', { requestId: refusedRequestId }),
    ).rejects.toThrow(/SECRET-REASON-4711/);
    await session.close();
    // Stopping the agent flushes its spans, the workflow's last ones (RunWorkflow ends with
    // the session) included.
    await agent.shutdown();
    agent = undefined;
    await waitFor(
      () => {
        spans = exportedSpans(file);
        return (
          spans.some(
            (s) =>
              // Temporal's workflow exporter adds the workflow's info to each span it exports.
              s.name === 'RunWorkflow:sessionWorkflow' && s.attributes.workflowId === workflowId,
          ) &&
          // The refused send's own span, whose status the content check reads.
          spans.some(
            (s) =>
              s.name === 'send' && s.attributes['durable_agent.request.id'] === refusedRequestId,
          )
        );
      },
      30_000,
      "the session's RunWorkflow span in the collector's file",
    ).catch((error: Error) => {
      const seen = [...new Set(exportedSpans(file).map((s) => s.name))].join(', ');
      const runs = exportedSpans(file)
        .filter((s) => s.name.startsWith('RunWorkflow'))
        .map((s) => JSON.stringify(s.attributes));
      const logged = collector.log().trim() || 'nothing';
      throw new Error(
        `${error.message} (the file has: ${seen || 'no span'}; RunWorkflow spans: ${runs.join(' ')}; the collector logged: ${logged})`,
      );
    });
  }, 180_000);

  afterAll(async () => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_SERVICE_NAME;
    await agent?.shutdown();
    await collector?.stop();
  });

  const named = (name: string) => spans.filter((s) => s.name === name);
  const sendSpan = (requestId: string) => {
    const found = named('send').filter(
      (s) => s.attributes['durable_agent.request.id'] === requestId,
    );
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  it('the session ran as scripted: Bash blocked by the hook, Write approved and run', () => {
    expect(first.toolCalls.map((c) => [c.toolName, c.status])).toEqual([
      ['Bash', 'aborted'],
      ['Write', 'success'],
    ]);
    expect(second.text()).toBe('plain answer');
    expect(readFileSync(join(workspace, 'NOTES.md'), 'utf8')).toBe('approved note');
    expect(new Set(spans.map((s) => s.serviceName))).toEqual(new Set(['tracing-test']));
  });

  it('each send is one trace: its Temporal update and activity spans and the agent spans under it', () => {
    const send = sendSpan(firstRequestId);
    expect(send.attributes).toMatchObject({
      'durable_agent.session.id': sessionId,
      'durable_agent.send.status': 'completed',
      'durable_agent.send.tool_calls': 2,
    });
    expect(send.parentSpanId).toBe('');
    const trace = spans.filter((s) => s.traceId === send.traceId);
    const names = new Set(trace.map((s) => s.name));
    for (const name of [
      'StartWorkflowUpdate:send',
      'HandleUpdate:send',
      'StartActivity:dispatchHook',
      'RunActivity:dispatchHook',
      'StartActivity:modelStep',
      'RunActivity:modelStep',
      'RunActivity:checkPermission',
      'RunActivity:executeTool',
      'hook PreToolUse',
      'model.step',
      'permission Write',
      'tool Write',
    ]) {
      expect(names, name).toContain(name);
    }
    // Each of the worker's spans hangs from Temporal's RunActivity span, which hangs from the
    // workflow's StartActivity span, the update's handler, the client's update call, the send.
    for (const [span, activity] of [
      ['hook PreToolUse', 'dispatchHook'],
      ['model.step', 'modelStep'],
      ['permission Write', 'checkPermission'],
      ['tool Write', 'executeTool'],
    ] as const) {
      for (const found of trace.filter((s) => s.name === span)) {
        expect(ancestry(found, trace), span).toEqual([
          `RunActivity:${activity}`,
          `StartActivity:${activity}`,
          'HandleUpdate:send',
          'StartWorkflowUpdate:send',
          'send',
        ]);
      }
    }
    // The second send is a trace of its own, with its own model step.
    const other = sendSpan(secondRequestId);
    expect(other.traceId).not.toBe(send.traceId);
    const steps = named('model.step');
    expect(
      steps
        .filter((s) => s.traceId === send.traceId)
        .map((s) => s.attributes['durable_agent.model.step']),
    ).toEqual(expect.arrayContaining([0, 1]));
    expect(steps.filter((s) => s.traceId === other.traceId)).toHaveLength(1);
  });

  it("the session's creation is one trace: StartWorkflow, RunWorkflow, SessionStart's RunActivity and hook span share its id", () => {
    const [create] = named('session.create').filter(
      (s) => s.attributes['durable_agent.session.id'] === sessionId,
    );
    expect(create).toBeDefined();
    const trace = spans.filter((s) => s.traceId === create!.traceId);
    const start = trace.find((s) => s.name === 'StartWorkflow:sessionWorkflow');
    expect(start?.attributes.temporalWorkflowId).toBe(workflowId);
    const [sessionStart] = trace.filter(
      (s) =>
        s.name === 'hook SessionStart' && s.attributes['durable_agent.session.id'] === sessionId,
    );
    expect(sessionStart).toBeDefined();
    expect(ancestry(sessionStart!, trace)).toEqual([
      'RunActivity:dispatchHook',
      'StartActivity:dispatchHook',
      'RunWorkflow:sessionWorkflow',
      'StartWorkflow:sessionWorkflow',
      'session.create',
    ]);
  });

  it('a hook dispatch span carries event, tool, callbacks, budget, outcome, decision and the deciding callback', () => {
    const send = sendSpan(firstRequestId);
    const hooks = named('hook PreToolUse').filter((s) => s.traceId === send.traceId);
    const blocked = hooks.find((s) => s.attributes['durable_agent.hook.tool'] === 'Bash');
    expect(blocked?.attributes).toMatchObject({
      'durable_agent.hook.event': 'PreToolUse',
      'durable_agent.hook.tool': 'Bash',
      'durable_agent.hook.callbacks': 1,
      'durable_agent.hook.budget_ms': HOOK_BUDGET_MS,
      'durable_agent.hook.outcome': 'completed',
      'durable_agent.hook.decision': 'abort',
      'durable_agent.hook.decided_by': 0,
      'durable_agent.session.id': sessionId,
      'durable_agent.request.id': firstRequestId,
    });
    const allowed = hooks.find((s) => s.attributes['durable_agent.hook.tool'] === 'Write');
    expect(allowed?.attributes).toMatchObject({
      'durable_agent.hook.event': 'PreToolUse',
      'durable_agent.hook.outcome': 'completed',
      'durable_agent.hook.decision': 'continue',
    });
    expect(allowed?.attributes).not.toHaveProperty('durable_agent.hook.decided_by');
    // Spans carry no content: not the hook's reason, not the tool's input.
    const everything = JSON.stringify(spans);
    expect(everything).not.toContain('no shell in this session');
    expect(everything).not.toContain('approved note');
    // Nor a refused send's reason or prompt, in any span's status or recorded exception (the
    // collector's raw export, statuses and events included): the failed spans say only what
    // failed, the error's name and code.
    const exported = readFileSync(file, 'utf8');
    expect(exported).not.toContain('SECRET-REASON-4711');
    expect(exported).not.toContain('SECRET-PROMPT-4711');
    expect(exported).not.toContain('no shell in this session');
  });

  it('model step, permission and tool spans say what happened; the blocked tool has none', () => {
    const send = sendSpan(firstRequestId);
    const inTrace = (name: string) => named(name).filter((s) => s.traceId === send.traceId);
    const steps = inTrace('model.step').sort(
      (a, b) =>
        Number(a.attributes['durable_agent.model.step']) -
        Number(b.attributes['durable_agent.model.step']),
    );
    expect(steps.map((s) => s.attributes)).toEqual([
      expect.objectContaining({
        'durable_agent.model.step': 0,
        'durable_agent.model.finish_reason': 'tool-calls',
        'durable_agent.model.tool_calls': 2,
        'durable_agent.model.name': 'scripted',
      }),
      expect.objectContaining({
        'durable_agent.model.step': 1,
        'durable_agent.model.finish_reason': 'stop',
        'durable_agent.model.tool_calls': 0,
      }),
    ]);
    expect(
      inTrace('permission Write').map((s) => s.attributes['durable_agent.permission.behavior']),
    ).toEqual(['ask']);
    expect(inTrace('tool Write').map((s) => s.attributes['durable_agent.tool.status'])).toEqual([
      'success',
    ]);
    expect(named('tool Bash')).toEqual([]);
    // The approval is a trace of its own: the client's update call and the workflow's handler.
    const approve = named('StartWorkflowUpdate:decidePermission').find(
      (s) => s.attributes.temporalWorkflowId === workflowId,
    );
    expect(approve).toBeDefined();
    expect(
      spans.some(
        (s) => s.name === 'HandleUpdate:decidePermission' && s.traceId === approve!.traceId,
      ),
    ).toBe(true);
  });

  it("the traced session's history replays with tracing on and off, every recorded history with it on, and a replay exports no span", async () => {
    const client = await rawClient();
    try {
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      // Tracing off: the package's workflow code as the tests bundle it.
      const plain = process.env.DURABLE_AGENT_WORKFLOW_BUNDLE!;
      await Worker.runReplayHistory({ workflowBundle: { codePath: plain } }, history, workflowId);
      // Tracing on, as a worker runs it (the plugin and its workflow interceptors), with a
      // provider of our own whose exporter keeps what it gets: nothing, on replay.
      const exporter = new InMemorySpanExporter();
      const provider = new BasicTracerProvider({
        spanProcessors: [new SimpleSpanProcessor(exporter)],
      });
      const tracing = (await acquireTracing({
        name: 'replay',
        version: 'replay',
        tracing: resolveTracing({ tracerProvider: provider }, 'replay'),
      }))!;
      try {
        const traced = await bundleWithExtras([], [tracing.plugin]);
        const options = { workflowBundle: traced.bundle, plugins: [tracing.plugin] };
        await Worker.runReplayHistory(options, history, workflowId);
        // Every session recorded without tracing (test/fixtures/histories: approvals, aborts,
        // timeouts, continue-as-new, ...) replays with tracing on: tracing can be turned on
        // for running sessions.
        const recorded = readdirSync(fixtures).filter((f) => f.endsWith('.json'));
        expect(recorded).toContain('demo-session.json');
        const results = Worker.runReplayHistories(
          options,
          recorded.map((file) => ({
            workflowId: file,
            history: historyFromJSON(JSON.parse(readFileSync(join(fixtures, file), 'utf8'))),
          })),
        );
        for await (const result of results) {
          expect(result.error, `${result.workflowId}: ${String(result.error)}`).toBeUndefined();
        }
      } finally {
        await tracing.release();
      }
      expect(exporter.getFinishedSpans()).toEqual([]);
    } finally {
      await client.connection.close();
    }
  });
});
