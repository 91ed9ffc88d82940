/**
 * Spans carry no content (issue 17): a span whose call failed records the error's name and
 * code, never its message (which may quote a prompt, a tool input or a hook's reason).
 * Pure logic: OpenTelemetry's in-memory exporter, no collector.
 */
import * as api from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect, it } from 'vitest';
import { HookError } from '../../../src/common/errors.js';
import { errorLabel } from '../../../src/common/error-label.js';
import { inSpan } from '../../../src/tracing/spans.js';
import { contentFree, type AgentTracing } from '../../../src/tracing/tracing.js';

it("records a failed call's error by name and code, never by its message", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracing = { api, tracer: provider.getTracer('unit') } as unknown as AgentTracing;
  const secret = new HookError('HOOK_ABORTED', 'refused: the prompt said SECRET-4711');
  await expect(inSpan(tracing, 'send', {}, () => Promise.reject(secret))).rejects.toBe(secret);
  const [span] = exporter.getFinishedSpans();
  expect(span?.status).toEqual({
    code: api.SpanStatusCode.ERROR,
    message: 'HookError HOOK_ABORTED',
  });
  expect(span?.events.map((e) => e.attributes)).toEqual([
    { 'exception.type': 'HookError', 'exception.message': 'HookError HOOK_ABORTED' },
  ]);
  expect(JSON.stringify(span?.events)).not.toContain('SECRET-4711');
});

it('labels an error by its class name and code (or Temporal type), a non-error as Error', () => {
  expect(errorLabel(new HookError('HOOK_TIMEOUT', 'slow: SECRET'))).toBe('HookError HOOK_TIMEOUT');
  expect(errorLabel(Object.assign(new Error('x'), { type: 'ToolFailed' }))).toBe(
    'Error ToolFailed',
  );
  expect(errorLabel(new TypeError('SECRET'))).toBe('TypeError');
  expect(errorLabel('SECRET')).toBe('Error');
});

it("the agent's exporter strips a span's failure message and exception text, keeping the type", async () => {
  const exported = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(contentFree(exported))],
  });
  // As Temporal's interceptors record a failed activity: the failure's message, verbatim.
  const span = provider.getTracer('unit').startSpan('RunActivity:executeTool');
  span.recordException(new TypeError('Bash failed: rm -rf /srv/SECRET-4711'));
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: 'Bash failed: SECRET-4711' });
  span.addEvent('kept', { note: 'an event that is not an exception passes as is' });
  span.end();
  const clean = provider.getTracer('unit').startSpan('clean');
  clean.end();
  const [scrubbed, untouched] = exported.getFinishedSpans();
  expect(scrubbed?.status).toEqual({ code: api.SpanStatusCode.ERROR });
  expect(scrubbed?.events.map((e) => [e.name, e.attributes])).toEqual([
    ['exception', { 'exception.type': 'TypeError' }],
    ['kept', { note: 'an event that is not an exception passes as is' }],
  ]);
  expect(scrubbed?.name).toBe('RunActivity:executeTool');
  expect(JSON.stringify({ s: scrubbed?.status, e: scrubbed?.events })).not.toContain('SECRET');
  expect(untouched?.name).toBe('clean');
  expect(untouched?.status).toEqual({ code: api.SpanStatusCode.UNSET });
});
