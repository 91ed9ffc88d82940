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
import { HookError } from '../../src/common/errors.js';
import { errorLabel } from '../../src/common/error-label.js';
import { inSpan } from '../../src/tracing/spans.js';
import type { AgentTracing } from '../../src/tracing/tracing.js';

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
