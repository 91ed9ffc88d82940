/**
 * Tracing on without one of its optional peer dependencies: a ConfigError naming the
 * packages to install, when the worker or client starts (the module lookup is simulated).
 */
import { expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/common/errors.js';
import { resolveTracing } from '../../../src/tracing/options.js';
import { acquireTracing } from '../../../src/tracing/tracing.js';

vi.mock('@opentelemetry/exporter-trace-otlp-http', () => {
  throw new Error("Cannot find package '@opentelemetry/exporter-trace-otlp-http'");
});

it('says which packages to install when one is missing', async () => {
  const attempt = acquireTracing({
    name: 'unit',
    version: 'v1',
    tracing: resolveTracing(true, 'unit'),
  });
  await expect(attempt).rejects.toThrow(ConfigError);
  await expect(attempt).rejects.toThrow(
    /tracing is on, but @opentelemetry\/exporter-trace-otlp-http could not be loaded .*npm install @temporalio\/interceptors-opentelemetry@1\.24\.0 @opentelemetry\/api@\^1\.9\.1 @opentelemetry\/sdk-trace-base@\^1\.30\.1 @opentelemetry\/resources@\^1\.30\.1 @opentelemetry\/core@\^1\.30\.1 @opentelemetry\/context-async-hooks@\^1\.30\.1 @opentelemetry\/exporter-trace-otlp-http@\^0\.57\.2/,
  );
});
