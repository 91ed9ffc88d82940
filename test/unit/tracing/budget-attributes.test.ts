/**
 * A `model.step` span in a session with a budget carries the step's usage and what is left of
 * each cap once the step is counted; without a budget it carries neither. The traced activity
 * with a stub step, OpenTelemetry's in-memory exporter, no collector.
 */
import * as api from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { withTracing } from '../../../activities/tracing.js';
import type { ModelStepInput, ModelStepOutput } from '../../../src/common/activity-io.js';
import type { AgentRegistry } from '../../../src/definition/registry.js';
import { modelStepBudgetAttributes } from '../../../src/tracing/budget-attributes.js';
import type { AgentTracing } from '../../../src/tracing/tracing.js';

const usage = { inputTokens: 100, outputTokens: 20, totalTokens: 120 };
const price = { inputUsdPerMillion: 0.15, outputUsdPerMillion: 0.6 };

/** The `model.step` span of one traced step given `input`. */
async function stepSpan(input: Partial<ModelStepInput>) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = { api, tracer: provider.getTracer('unit') } as unknown as AgentTracing;
  const output: ModelStepOutput = { text: 'hi', finishReason: 'stop', usage } as ModelStepOutput;
  const stub = () => Promise.reject(new Error('not called'));
  const registry = {
    agent: () => {
      throw new Error('unknown');
    },
  } as unknown as AgentRegistry;
  const traced = withTracing(tracing, registry, {
    dispatchHook: stub,
    checkPermission: stub,
    executeTool: stub,
    modelStep: (_: ModelStepInput) => Promise.resolve(output),
  });
  await traced.modelStep({
    sessionId: 's',
    agentName: 'a',
    requestId: 'r',
    step: 0,
    promptIndex: 0,
    modelStepIndex: 0,
    ...input,
  } as ModelStepInput);
  return exporter.getFinishedSpans()[0]!;
}

it("a budgeted step's span carries its usage and each cap's remaining after it", async () => {
  const span = await stepSpan({
    maxOutputTokens: 20,
    budget: { remaining: { totalTokens: 400, modelCalls: 3, costUsd: 0.01 }, price },
  });
  expect(span.name).toBe('model.step');
  expect(span.attributes).toMatchObject({
    'durable_agent.model.usage.input_tokens': 100,
    'durable_agent.model.usage.output_tokens': 20,
    'durable_agent.model.usage.total_tokens': 120,
    'durable_agent.budget.remaining.totalTokens': 280,
    'durable_agent.budget.remaining.modelCalls': 2,
    'durable_agent.budget.remaining.costUsd': 0.009973,
  });
});

it('a step of a session without a budget carries no usage and no remaining', async () => {
  const span = await stepSpan({});
  const names = Object.keys(span.attributes);
  expect(names.filter((n) => n.includes('usage') || n.includes('budget'))).toEqual([]);
});

it('without reported usage, the span says the step is estimated and leaves tokens out', () => {
  expect(
    modelStepBudgetAttributes({ remaining: { totalTokens: 50, modelCalls: 1 } }, undefined),
  ).toEqual({
    'durable_agent.model.usage.estimated': true,
    'durable_agent.budget.remaining.modelCalls': 0,
  });
});
