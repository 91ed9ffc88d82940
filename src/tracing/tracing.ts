/**
 * OpenTelemetry tracing of an agent (`tracing` of `createAgent`, `createAgentWorker`,
 * `createAgentClient`): the option, its validation, and the tracer provider, exporter and
 * Temporal plugin built from it.
 *
 * Off by default. On, the agent's spans (session, send, hook dispatch, model step,
 * permission, tool: see `spans.ts`) and Temporal's own (`StartWorkflow`, `RunWorkflow`,
 * `StartWorkflowUpdate`, `HandleUpdate`, `StartActivity`, `RunActivity`, from Temporal's
 * `OpenTelemetryPlugin`) go to one tracer provider and are joined into one trace per call:
 * the client's span context travels to the workflow and its activities in Temporal's
 * headers. Spans made inside the workflow sandbox leave it through Temporal's sink, which
 * is not called on replay, so a replayed workflow task exports nothing twice.
 *
 * The OpenTelemetry packages are optional peer dependencies, loaded only when tracing is
 * on: `@temporalio/interceptors-opentelemetry`, `@opentelemetry/api`,
 * `@opentelemetry/sdk-trace-base`, `@opentelemetry/resources` and (unless a
 * `tracerProvider` is given) `@opentelemetry/exporter-trace-otlp-http`.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as OtelApi from '@opentelemetry/api';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtelResources from '@opentelemetry/resources';
import type * as OtelSdk from '@opentelemetry/sdk-trace-base';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';

/** The OpenTelemetry API module. */
type OtelApiModule = typeof OtelApi;
import type { IResource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConfigError, messageOf } from '../common/errors.js';
import type { TemporalPlugin } from '../agent/options.js';
import { AsyncLocalStorageContextManager } from './context-manager.js';

/**
 * A tracer provider of the OpenTelemetry SDK (1.x): `BasicTracerProvider` or
 * `NodeTracerProvider`, e.g. the one `NodeSDK` registered. Besides the agent's spans and
 * Temporal's client and activity spans, its span processor and resource export the spans
 * made inside the workflow sandbox, which Temporal hands over as finished spans.
 */
export interface SdkTracerProvider extends OtelApi.TracerProvider {
  /** The provider's span processor(s): `BasicTracerProvider.getActiveSpanProcessor()`. */
  getActiveSpanProcessor(): SpanProcessor;
  /** The provider's resource (service name and the rest). */
  readonly resource: IResource;
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
 * is given: then add `@temporalio/interceptors-opentelemetry/lib/workflow-interceptors` to
 * that bundle's `workflowInterceptorModules` for the workflow's spans.
 *
 * The process-wide OpenTelemetry context manager and propagator are registered when the
 * process has none (an AsyncLocalStorage context manager, W3C trace context): set up your
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

/** An agent's tracing at run time: what the worker, the activities and the client use. */
export interface AgentTracing {
  /** The OpenTelemetry API, as loaded (the activities and the client need no import of it). */
  readonly api: OtelApiModule;
  /** The tracer of the agent's spans and of Temporal's interceptors. */
  readonly tracer: OtelApi.Tracer;
  /** Temporal's `OpenTelemetryPlugin`, for the worker's and client's connections. */
  readonly plugin: TemporalPlugin;
  /**
   * One user less (a worker or client that stopped): flushes the spans; the last user of
   * a provider the agent made shuts it down. Never throws (an export failure is dropped).
   */
  release(): Promise<void>;
}

/** What the tracing of one resolved options object needs. */
interface TracedOptions {
  name: string;
  version: string;
  tracing: ResolvedTracing | undefined;
}

interface Shared {
  built: Promise<Built>;
  users: number;
}

interface Built {
  api: OtelApiModule;
  tracer: OtelApi.Tracer;
  plugin: TemporalPlugin;
  /** Flush, and shut down a provider the agent made. */
  close(last: boolean): Promise<void>;
}

const shared = new WeakMap<TracedOptions, Shared>();

/**
 * The tracing of `options` for one more user (a worker or a client), built once per
 * resolved options object, so an agent's worker and client share one provider; undefined
 * when tracing is off. Pair each call with one `release()`.
 * @throws {ConfigError} when tracing is on and a package it needs is not installed, naming
 *   the packages to install.
 */
export async function acquireTracing(options: TracedOptions): Promise<AgentTracing | undefined> {
  const config = options.tracing;
  if (!config) return undefined;
  let entry = shared.get(options);
  if (!entry) {
    entry = { built: build(config, options), users: 0 };
    shared.set(options, entry);
  }
  const current = entry;
  current.users++;
  let built: Built;
  try {
    built = await current.built;
  } catch (error) {
    current.users--;
    if (shared.get(options) === current) shared.delete(options);
    throw error;
  }
  let released = false;
  return {
    api: built.api,
    tracer: built.tracer,
    plugin: built.plugin,
    async release() {
      if (released) return;
      released = true;
      current.users--;
      const last = current.users === 0;
      if (last && shared.get(options) === current) shared.delete(options);
      await built.close(last).catch(() => undefined);
    },
  };
}

/** The optional peer dependencies, with the versions this package is built and tested with. */
const PEERS = {
  api: '@opentelemetry/api@^1.9.1',
  sdk: '@opentelemetry/sdk-trace-base@^1.30.1',
  resources: '@opentelemetry/resources@^1.30.1',
  exporter: '@opentelemetry/exporter-trace-otlp-http@^0.57.2',
  temporal: '@temporalio/interceptors-opentelemetry@1.24.0',
} as const;

async function build(config: ResolvedTracing, options: TracedOptions): Promise<Built> {
  const needed: string[] = [PEERS.temporal, PEERS.api, PEERS.sdk, PEERS.resources];
  if (!config.tracerProvider) needed.push(PEERS.exporter);
  const load = async <T>(name: string): Promise<T> => {
    try {
      return (await import(name)) as T;
    } catch (error) {
      throw new ConfigError(
        `tracing is on, but ${name} could not be loaded (${messageOf(error)}). Tracing needs ` +
          `these packages next to durable-agent-sdk: npm install ${needed.join(' ')}`,
        { cause: error },
      );
    }
  };
  const api = await load<typeof OtelApi>('@opentelemetry/api');
  const sdk = await load<typeof OtelSdk>('@opentelemetry/sdk-trace-base');
  const resources = await load<typeof OtelResources>('@opentelemetry/resources');
  const temporal = await load<typeof TemporalOtel>('@temporalio/interceptors-opentelemetry');
  registerPropagation(api);

  let provider: SdkTracerProvider;
  let ownProvider: InstanceType<typeof sdk.BasicTracerProvider> | undefined;
  if (config.tracerProvider) {
    provider = config.tracerProvider;
  } else {
    const { OTLPTraceExporter } = await load<typeof OtlpHttp>(
      '@opentelemetry/exporter-trace-otlp-http',
    );
    const exporter = new OTLPTraceExporter({
      ...(config.url !== undefined ? { url: config.url } : {}),
      ...(config.headers ? { headers: config.headers } : {}),
    });
    ownProvider = new sdk.BasicTracerProvider({
      resource: new resources.Resource({
        'service.name': config.serviceName,
        'service.version': options.version,
        'durable_agent.agent.name': options.name,
      }),
      spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
    });
    provider = ownProvider;
  }
  const tracer = provider.getTracer('durable-agent-sdk');
  const plugin = new (sessionPluginClass(temporal))({
    tracer,
    spanProcessor: provider.getActiveSpanProcessor(),
    resource: provider.resource as InstanceType<typeof resources.Resource>,
  });
  return {
    api,
    tracer,
    plugin,
    async close(last) {
      if (ownProvider) {
        await (last ? ownProvider.shutdown() : ownProvider.forceFlush());
      } else {
        await provider.forceFlush?.();
      }
    },
  };
}

/**
 * Temporal's `OpenTelemetryPlugin` (client, activity and workflow interceptors, the sink of
 * the workflow's spans), bundling `workflow-interceptors.ts` in place of Temporal's workflow
 * interceptor module: the same interceptors, made replay-safe (see that module).
 */
function sessionPluginClass(temporal: typeof TemporalOtel) {
  const require = createRequire(import.meta.url);
  const temporalModule =
    require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
  const ours = workflowInterceptorsPath();
  return class SessionOpenTelemetryPlugin extends temporal.OpenTelemetryPlugin {
    override configureBundler(
      options: Parameters<TemporalOtel.OpenTelemetryPlugin['configureBundler']>[0],
    ) {
      const configured = super.configureBundler(options);
      return {
        ...configured,
        workflowInterceptorModules: (configured.workflowInterceptorModules ?? []).map((m) =>
          m === temporalModule ? ours : m,
        ),
      };
    }
  };
}

/**
 * Path of the workflow interceptor module of tracing: `workflow-interceptors.js` in the
 * built package, `.ts` in a clone run from sources.
 */
export function workflowInterceptorsPath(): string {
  for (const candidate of ['./workflow-interceptors.js', './workflow-interceptors.ts']) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error('durable-agent-sdk: src/tracing/workflow-interceptors.{js,ts} not found');
}

/**
 * The process-wide context manager and propagator, when the process has none: without
 * them a span cannot be the parent of the next (no active context) and no context
 * travels in Temporal's headers. An application's own (NodeSDK) stay.
 */
function registerPropagation(api: OtelApiModule): void {
  const probe = api.createContextKey('durable-agent-sdk probe');
  const marked = api.ROOT_CONTEXT.setValue(probe, true);
  const working = api.context.with(marked, () => api.context.active().getValue(probe) === true);
  if (!working) {
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager(api.ROOT_CONTEXT));
  }
  const carrier: Record<string, string> = {};
  const sample = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: api.TraceFlags.SAMPLED,
  });
  api.propagation.inject(sample, carrier);
  if (Object.keys(carrier).length === 0) {
    // The W3C propagator of @opentelemetry/core, the SDK's own dependency (found from it).
    const fromSdk = createRequire(
      createRequire(import.meta.url).resolve('@opentelemetry/sdk-trace-base'),
    );
    const core = fromSdk('@opentelemetry/core') as typeof OtelCore;
    api.propagation.setGlobalPropagator(
      new core.CompositePropagator({
        propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
      }),
    );
  }
}

function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
