/**
 * OpenTelemetry tracing of an agent (`tracing` of `createAgent`, `createAgentWorker`,
 * `createAgentClient`; the option itself is in `options.ts`): the tracer provider, exporter
 * and Temporal plugin built from it.
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
 * `@opentelemetry/sdk-trace-base`, `@opentelemetry/resources`, `@opentelemetry/core` (the W3C
 * propagator), `@opentelemetry/context-async-hooks` (the context manager) and (unless a
 * `tracerProvider` is given) `@opentelemetry/exporter-trace-otlp-http`.
 *
 * @module
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type * as OtelContext from '@opentelemetry/context-async-hooks';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtelResources from '@opentelemetry/resources';
import type * as OtelSdk from '@opentelemetry/sdk-trace-base';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';

/** The OpenTelemetry API module. */
type OtelApiModule = typeof OtelApi;
import { ConfigError, messageOf } from '../common/errors.js';
import {
  tracingWorkflowInterceptorsPath,
  type ResolvedTracing,
  type SdkTracerProvider,
  type SpanRunner,
} from './options.js';
import type { TemporalPlugin } from '../temporal/options.js';
import { inSpan } from './spans.js';

/** An agent's tracing at run time: what the worker, the activities and the client use. */
export interface AgentTracing {
  /** The OpenTelemetry API, as loaded (the activities and the client need no import of it). */
  readonly api: OtelApiModule;
  /** The tracer of the agent's spans and of Temporal's interceptors. */
  readonly tracer: OtelApi.Tracer;
  /** Temporal's `OpenTelemetryPlugin`, for the worker's and client's connections. */
  readonly plugin: TemporalPlugin;
  /** {@link inSpan} on this tracing, for what takes no OpenTelemetry types (a session handle). */
  readonly run: SpanRunner;
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
  const tracing: AgentTracing = {
    api: built.api,
    tracer: built.tracer,
    plugin: built.plugin,
    run: (name, attributes, fn) =>
      inSpan(tracing, name, attributes, (span) => fn((more) => span.setAttributes(more))),
    async release() {
      if (released) return;
      released = true;
      current.users--;
      const last = current.users === 0;
      if (last && shared.get(options) === current) shared.delete(options);
      await built.close(last).catch(() => undefined);
    },
  };
  return tracing;
}

/** The optional peer dependencies, with the versions this package is built and tested with. */
const PEERS = {
  api: '@opentelemetry/api@^1.9.1',
  sdk: '@opentelemetry/sdk-trace-base@^1.30.1',
  resources: '@opentelemetry/resources@^1.30.1',
  core: '@opentelemetry/core@^1.30.1',
  context: '@opentelemetry/context-async-hooks@^1.30.1',
  exporter: '@opentelemetry/exporter-trace-otlp-http@^0.57.2',
  temporal: '@temporalio/interceptors-opentelemetry@1.24.0',
} as const;

async function build(config: ResolvedTracing, options: TracedOptions): Promise<Built> {
  const needed: string[] = [
    PEERS.temporal,
    PEERS.api,
    PEERS.sdk,
    PEERS.resources,
    PEERS.core,
    PEERS.context,
  ];
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
  const core = await load<typeof OtelCore>('@opentelemetry/core');
  const contextHooks = await load<typeof OtelContext>('@opentelemetry/context-async-hooks');
  registerPropagation(api, core, contextHooks);

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
      spanProcessors: [new sdk.BatchSpanProcessor(contentFree(exporter))],
    });
    provider = ownProvider;
  }
  const tracer = provider.getTracer('durable-agent-sdk') as OtelApi.Tracer;
  const plugin = new (sessionPluginClass(temporal))({
    tracer,
    spanProcessor: provider.getActiveSpanProcessor() as OtelSdk.SpanProcessor,
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
 * `exporter`, but every span it exports is content-free: a status message and a recorded
 * exception keep only the exception's type (`exception.type`), never the message or stack.
 * The agent's own spans record only names and codes already; Temporal's interceptors record
 * a failure's message (a hook's abort reason, a tool's error quoting its input), which
 * encryption seals in history but a span would export as is. Internal (exported for its
 * unit test); the agent wraps its own exporter with it.
 */
export function contentFree(exporter: OtelSdk.SpanExporter): OtelSdk.SpanExporter {
  const scrub = (span: OtelSdk.ReadableSpan): OtelSdk.ReadableSpan => {
    const exceptions = span.events.some((e) => e.name === 'exception');
    if (!span.status.message && !exceptions) return span;
    const status = { code: span.status.code };
    const events = span.events.map((e) =>
      e.name === 'exception'
        ? { ...e, attributes: { 'exception.type': e.attributes?.['exception.type'] ?? 'Error' } }
        : e,
    );
    return new Proxy(span, {
      get(target, key) {
        if (key === 'status') return status;
        if (key === 'events') return events;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });
  };
  return {
    export: (spans, done) => exporter.export(spans.map(scrub), done),
    shutdown: () => exporter.shutdown(),
    ...(exporter.forceFlush ? { forceFlush: () => exporter.forceFlush!() } : {}),
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
  const ours = tracingWorkflowInterceptorsPath();
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
 * The process-wide context manager and propagator, when the process has none: without
 * them a span cannot be the parent of the next (no active context) and no context
 * travels in Temporal's headers. An application's own (NodeSDK) stay.
 */
function registerPropagation(
  api: OtelApiModule,
  core: typeof OtelCore,
  contextHooks: typeof OtelContext,
): void {
  const probe = api.createContextKey('durable-agent-sdk probe');
  const marked = api.ROOT_CONTEXT.setValue(probe, true);
  const working = api.context.with(marked, () => api.context.active().getValue(probe) === true);
  if (!working) {
    api.context.setGlobalContextManager(
      new contextHooks.AsyncLocalStorageContextManager().enable(),
    );
  }
  const carrier: Record<string, string> = {};
  const sample = api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: api.TraceFlags.SAMPLED,
  });
  api.propagation.inject(sample, carrier);
  if (Object.keys(carrier).length === 0) {
    api.propagation.setGlobalPropagator(
      new core.CompositePropagator({
        propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
      }),
    );
  }
}
