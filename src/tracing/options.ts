/**
 * The `tracing` option of an agent: its shape, validation and defaults. No OpenTelemetry
 * type or module here (this module's declarations are part of the package's public types,
 * which must compile without the optional OpenTelemetry packages); `tracing.ts` builds the
 * provider, exporter and Temporal plugin from it when tracing is on.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A tracer provider of the OpenTelemetry SDK (1.x): `BasicTracerProvider` or
 * `NodeTracerProvider`, e.g. the one `NodeSDK` registered. Besides the agent's spans and
 * Temporal's client and activity spans, its span processor and resource export the spans
 * made inside the workflow sandbox, which Temporal hands over as finished spans.
 */
export interface SdkTracerProvider {
  /** A tracer (OpenTelemetry's `TracerProvider.getTracer`). */
  getTracer(name: string, version?: string): object;
  /** The provider's span processor(s): `BasicTracerProvider.getActiveSpanProcessor()`. */
  getActiveSpanProcessor(): object;
  /** The provider's resource (service name and the rest). */
  readonly resource: object;
  /** Called when the agent's worker or client stops, so their spans are not left buffered. */
  forceFlush?(): Promise<void>;
}

/** `tracing` as an object: see {@link TracingOption}. */
export interface TracingOptions {
  /**
   * The OTLP/HTTP endpoint of a collector, as its base URL: `http://host:4318` (spans are
   * posted to `<endpoint>/v1/traces`). Without it the exporter follows the standard
   * variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL), else
   * `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, `/v1/traces` appended), else
   * `http://localhost:4318`.
   * @default the variables above
   * @throws {ConfigError} at `createAgent` unless it is an `http:` or `https:` URL.
   */
  endpoint?: string;
  /**
   * HTTP headers of every export (an API key of a hosted backend), by header name.
   * @default `OTEL_EXPORTER_OTLP_TRACES_HEADERS` / `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`)
   * @throws {ConfigError} at `createAgent` when a value is not a string.
   */
  headers?: Record<string, string>;
  /**
   * The `service.name` of the spans' resource.
   * @default `OTEL_SERVICE_NAME`, else `durable-agent.<agent name>`
   * @throws {ConfigError} at `createAgent` when it is not a non-empty string.
   */
  serviceName?: string;
  /**
   * Your own tracer provider (see {@link SdkTracerProvider}), with its exporter and
   * resource, in place of the one the agent makes: then `endpoint`, `headers` and
   * `serviceName` do not apply (giving them too is refused), and the agent never shuts it
   * down (it flushes it when its worker or client stops).
   * @default a provider the agent makes: OTLP/HTTP exporter, batched, shut down with the agent
   * @throws {ConfigError} at `createAgent` when it lacks `getTracer`,
   *   `getActiveSpanProcessor` or `resource`.
   */
  tracerProvider?: SdkTracerProvider;
}

/**
 * The `tracing` option of `createAgent`, `createAgentWorker` and `createAgentClient`:
 * `true` for OTLP/HTTP export to the collector the standard `OTEL_EXPORTER_OTLP_*`
 * variables name (`http://localhost:4318` without them), an object for an endpoint, headers,
 * a service name or a tracer provider of your own, `false` or left out for none.
 *
 * When on, the worker bundles its workflow code at startup (with Temporal's workflow
 * interceptors), as any bundler plugin makes it do, unless `advanced.temporal.workflowBundle`
 * is given: then add {@link tracingWorkflowInterceptorsPath}`()` to that bundle's
 * `workflowInterceptorModules` for the workflow's spans.
 *
 * The process-wide OpenTelemetry context manager and propagator are registered when the
 * process has none (`@opentelemetry/context-async-hooks`' AsyncLocalStorageContextManager,
 * `@opentelemetry/core`'s W3C trace context and baggage propagators): set up your
 * own SDK (e.g. `NodeSDK.start()`) before the agent if you want yours. The agent never
 * registers a global tracer provider.
 *
 * @default off
 */
export type TracingOption = boolean | TracingOptions;

/** {@link TracingOption} validated, with its defaults; `undefined` in the options: off. */
export interface ResolvedTracing {
  /** The full traces URL, or undefined: the exporter reads the variables. */
  url: string | undefined;
  headers: Record<string, string> | undefined;
  serviceName: string;
  tracerProvider: SdkTracerProvider | undefined;
}

const TRACING_KEYS = ['endpoint', 'headers', 'serviceName', 'tracerProvider'];

/**
 * What is wrong with a `tracing` value, or undefined when it is fine.
 */
export function tracingProblem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `tracing must be true, false or { endpoint?, headers?, serviceName?, tracerProvider? }, got ${describe(value)}`;
  }
  const options = value as Record<string, unknown>;
  const unknownKey = Object.keys(options).find((key) => !TRACING_KEYS.includes(key));
  if (unknownKey !== undefined) {
    return `tracing has an unknown key '${unknownKey}' (keys: ${TRACING_KEYS.join(', ')})`;
  }
  const { endpoint, headers, serviceName, tracerProvider } = options;
  if (endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = typeof endpoint === 'string' ? new URL(endpoint) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      return `tracing.endpoint must be an http(s) URL such as 'http://127.0.0.1:4318', got ${describe(endpoint)}`;
    }
  }
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) {
      return `tracing.headers must be an object of header values, got ${describe(headers)}`;
    }
    for (const [name, v] of Object.entries(headers)) {
      if (typeof v !== 'string')
        return `tracing.headers.${name} must be a string, got ${describe(v)}`;
    }
  }
  if (serviceName !== undefined && (typeof serviceName !== 'string' || serviceName === '')) {
    return `tracing.serviceName must be a non-empty string, got ${describe(serviceName)}`;
  }
  if (tracerProvider !== undefined) {
    const provider = tracerProvider as Partial<SdkTracerProvider> | null;
    if (
      typeof provider !== 'object' ||
      provider === null ||
      typeof provider.getTracer !== 'function' ||
      typeof provider.getActiveSpanProcessor !== 'function' ||
      typeof provider.resource !== 'object'
    ) {
      return (
        'tracing.tracerProvider must be a tracer provider of the OpenTelemetry SDK 1.x ' +
        '(BasicTracerProvider, NodeTracerProvider: getTracer, getActiveSpanProcessor and ' +
        `resource, which also export the workflow's spans), got ${describe(tracerProvider)}`
      );
    }
    const alongside = ['endpoint', 'headers', 'serviceName'].filter(
      (k) => options[k] !== undefined,
    );
    if (alongside.length > 0) {
      return `tracing.tracerProvider comes with its own exporter and resource: drop tracing.${alongside.join(', tracing.')}`;
    }
  }
  return undefined;
}

/**
 * Resolve a validated `tracing` option: undefined when off.
 * @param agentName for the default service name.
 */
export function resolveTracing(
  value: TracingOption | undefined,
  agentName: string,
): ResolvedTracing | undefined {
  if (value === undefined || value === false) return undefined;
  const options: TracingOptions = value === true ? {} : value;
  const envName = process.env.OTEL_SERVICE_NAME?.trim();
  return {
    url: options.endpoint !== undefined ? tracesUrlOf(options.endpoint) : undefined,
    headers: options.headers ? { ...options.headers } : undefined,
    serviceName: options.serviceName ?? (envName || `durable-agent.${agentName}`),
    tracerProvider: options.tracerProvider,
  };
}

/** `<base>/v1/traces`, as the OTLP exporters make it from `OTEL_EXPORTER_OTLP_ENDPOINT`. */
function tracesUrlOf(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** Attribute values of a span, by attribute name. */
export type SpanAttributeValues = Record<string, string | number | boolean>;

/**
 * Runs `fn` in a span `name` of the agent's tracer (tracing on); `annotate` adds attributes
 * as the call learns them. @internal what a session handle is given.
 */
export type SpanRunner = <T>(
  name: string,
  attributes: SpanAttributeValues,
  fn: (annotate: (attributes: SpanAttributeValues) => void) => Promise<T>,
) => Promise<T>;

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/**
 * Path of the workflow interceptor module of tracing (replay-safe spans of the session
 * workflow: see README, Operability: Tracing): `dist/src/tracing/workflow-interceptors.js`
 * in the built package, `src/tracing/workflow-interceptors.ts` in a clone run from sources.
 * With tracing on the worker bundles it itself; with a bundle of your own
 * (`advanced.temporal.workflowBundle`), pass it in `workflowInterceptorModules`, e.g.
 * `bundleWorkflowCode({ workflowsPath: agentWorkflowsPath(), workflowInterceptorModules:
 * [tracingWorkflowInterceptorsPath()] })`.
 * @throws Error when neither file exists next to the package.
 */
export function tracingWorkflowInterceptorsPath(): string {
  for (const candidate of ['./workflow-interceptors.js', './workflow-interceptors.ts']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('durable-agent-sdk: src/tracing/workflow-interceptors.{js,ts} not found');
}
