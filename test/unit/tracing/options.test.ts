/**
 * The `tracing` option: what it accepts, what it refuses (naming the value), its defaults,
 * and the plugin it builds, which bundles the session's replay-safe workflow interceptors in
 * place of Temporal's module.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { AgentOptions } from '../../../src/definition/options.js';
import { resolveAgentOptions } from '../../../src/definition/resolve.js';
import { ConfigError } from '../../../src/common/errors.js';
import { scriptedModel } from '../../../src/testing/index.js';
import { resolveTracing } from '../../../src/tracing/options.js';
import { acquireTracing } from '../../../src/tracing/tracing.js';
import { tracingWorkflowInterceptorsPath as workflowInterceptorsPath } from '../../../src/index.js';
import * as sessionInterceptors from '../../../src/tracing/workflow-interceptors.js';

const model = scriptedModel(['ok']);
const resolve = (tracing: unknown) =>
  resolveAgentOptions({ model, tracing } as unknown as AgentOptions);

afterEach(() => {
  delete process.env.OTEL_SERVICE_NAME;
});

describe('tracing option', () => {
  it('is off by default and with false', () => {
    expect(resolve(undefined).tracing).toBeUndefined();
    expect(resolve(false).tracing).toBeUndefined();
  });

  it('true leaves the endpoint to the OTEL_EXPORTER_OTLP_* variables and names the service after the agent', () => {
    expect(resolveAgentOptions({ model, name: 'billing', tracing: true }).tracing).toEqual({
      url: undefined,
      headers: undefined,
      serviceName: 'durable-agent.billing',
      tracerProvider: undefined,
    });
    process.env.OTEL_SERVICE_NAME = 'from-env';
    expect(resolve(true).tracing?.serviceName).toBe('from-env');
  });

  it('an endpoint is a base URL: spans go to <endpoint>/v1/traces', () => {
    expect(resolve({ endpoint: 'http://127.0.0.1:4318/' }).tracing?.url).toBe(
      'http://127.0.0.1:4318/v1/traces',
    );
    expect(
      resolve({ endpoint: 'https://otel.example/base', serviceName: 's' }).tracing,
    ).toMatchObject({
      url: 'https://otel.example/base/v1/traces',
      serviceName: 's',
    });
  });

  it.each([
    [
      'yes',
      /tracing must be true, false or \{ endpoint\?, headers\?, serviceName\?, tracerProvider\? \}, got 'yes'/,
    ],
    [{ endpoint: 'ftp://x' }, /tracing\.endpoint must be an http\(s\) URL .*got 'ftp:\/\/x'/],
    [{ endpoint: 'not a url' }, /tracing\.endpoint must be an http\(s\) URL/],
    [
      { headers: { authorization: 1 } },
      /tracing\.headers\.authorization must be a string, got number/,
    ],
    [{ serviceName: '' }, /tracing\.serviceName must be a non-empty string/],
    [{ sampler: 1 }, /tracing has an unknown key 'sampler'/],
    [
      { tracerProvider: {} },
      /tracing\.tracerProvider must be a tracer provider of the OpenTelemetry SDK 1\.x/,
    ],
  ])('refuses %j, naming what is wrong', (value, message) => {
    expect(() => resolve(value)).toThrow(ConfigError);
    expect(() => resolve(value)).toThrow(message);
  });

  it('refuses an endpoint, headers or service name beside a tracer provider of your own', () => {
    const tracerProvider = new BasicTracerProvider();
    expect(() => resolve({ tracerProvider, endpoint: 'http://127.0.0.1:4318' })).toThrow(
      /tracing\.tracerProvider comes with its own exporter and resource: drop tracing\.endpoint/,
    );
    expect(resolve({ tracerProvider }).tracing?.tracerProvider).toBe(tracerProvider);
  });
});

describe('tracing plugin', () => {
  it("bundles the session's workflow interceptors in place of Temporal's module, keeping the others", async () => {
    const exporter = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const tracing = (await acquireTracing({
      name: 'unit',
      version: 'v1',
      tracing: resolveTracing({ tracerProvider }, 'unit'),
    }))!;
    try {
      const configured = tracing.plugin.configureBundler!({
        workflowsPath: '/w/index.js',
        workflowInterceptorModules: ['/app/interceptors.js'],
      });
      const temporalModule = createRequire(import.meta.url).resolve(
        '@temporalio/interceptors-opentelemetry/lib/workflow-interceptors',
      );
      expect(configured.workflowInterceptorModules).toEqual([
        '/app/interceptors.js',
        workflowInterceptorsPath(),
      ]);
      expect(configured.workflowInterceptorModules).not.toContain(temporalModule);
      expect(workflowInterceptorsPath()).toBe(
        fileURLToPath(new URL('../../../src/tracing/workflow-interceptors.ts', import.meta.url)),
      );
      expect(typeof sessionInterceptors.interceptors).toBe('function');
      // The agent's spans go to the provider given.
      tracing.tracer.startSpan('unit span').end();
      expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['unit span']);
    } finally {
      await tracing.release();
    }
  });

  it('is not built when tracing is off', async () => {
    expect(
      await acquireTracing({ name: 'unit', version: 'v1', tracing: undefined }),
    ).toBeUndefined();
  });
});
