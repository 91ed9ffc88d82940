/**
 * The workflow interceptors of tracing, bundled into the session workflow's code in place of
 * Temporal's own module (`@temporalio/interceptors-opentelemetry/lib/workflow-interceptors`):
 * the spans Temporal's interceptors make (`RunWorkflow`, `HandleUpdate`, `StartActivity`,
 * `ContinueAsNew`), the span context in the activities' headers (Temporal's
 * `headersWithContext` and `extractContextFromHeaders`), spans out through Temporal's sink
 * (its `SpanExporter`), with three changes that keep a session replayable whether tracing
 * is on or off, and when it is switched on or off for a running session:
 *
 * - Span and trace ids come from a generator of their own, seeded from the run id, instead
 *   of the workflow's `Math.random()`: Temporal's tracer draws them from the workflow's
 *   deterministic random stream, so each span shifts what `uuid4()` gives the workflow code
 *   after it (a permission request's id), and a history recorded with tracing on would not
 *   replay with it off, nor the other way round.
 * - Query handlers and update validators get no span: they do not run on replay, so a span
 *   there would shift the id stream between a run and its replay (temporalio/sdk-typescript#2023).
 * - A span never sits on the workflow's own promise chain: the interceptor returns the very
 *   promise of the call it wraps and ends the span beside it. Temporal's `instrument()`
 *   awaits the call inside nested async functions, which delays every update result,
 *   activity result and the workflow's end by some microtasks, so the commands of an
 *   activation come in another order than without tracing (seen here: an approval's
 *   `UpdateCompleted` after the permission timer's `TimerCanceled`, a nondeterminism error
 *   on a replay with tracing off).
 *
 * Signals, child workflows, Nexus operations and external signals, which sessions do not
 * use, pass through untraced.
 *
 * Workflow code: imports only what the sandbox can run.
 *
 * @module
 */
import { errorLabel } from '../common/error-label.js';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
  SpanName,
  SPAN_DELIMITER,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter.js';
import {
  extractContextFromHeaders,
  headersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type IdGenerator,
} from '@opentelemetry/sdk-trace-base';
import {
  context,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import {
  ContinueAsNew,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type LocalActivityInput,
  type Next,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type StartNexusOperationInput,
  type StartNexusOperationOutput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/**
 * Ids from xoshiro128** seeded with a hash of the run id: the same ids on every replay of a
 * run (a span re-made on replay keeps its id), distinct across runs, and never a draw from
 * the workflow's own random stream.
 */
class RunSeededIdGenerator implements IdGenerator {
  #state: Uint32Array | undefined;

  generateTraceId(): string {
    return this.#hex(4);
  }

  generateSpanId(): string {
    return this.#hex(2);
  }

  #hex(words: number): string {
    let out = '';
    for (let i = 0; i < words; i++) out += this.#next().toString(16).padStart(8, '0');
    // An all-zero id is invalid in OpenTelemetry.
    return /^0+$/.test(out) ? this.#hex(words) : out;
  }

  #next(): number {
    const s = (this.#state ??= seedOf(workflowInfo().runId));
    const [s0, s1, s2, s3] = [s[0]!, s[1]!, s[2]!, s[3]!];
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    const n2 = s2 ^ s0;
    const n3 = s3 ^ s1;
    s[1] = s1 ^ n2;
    s[0] = s0 ^ n3;
    s[2] = n2 ^ t;
    s[3] = rotl(n3 >>> 0, 11);
    return result;
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/** Four 32-bit words from `text` (FNV-1a, then splitmix32), never all zero. */
function seedOf(text: string): Uint32Array {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  const state = new Uint32Array(4);
  for (let i = 0; i < 4; i++) {
    h = (h + 0x9e3779b9) >>> 0;
    let z = h;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    state[i] = (z ^ (z >>> 16)) >>> 0;
  }
  if (state.every((w) => w === 0)) state[0] = 1;
  return state;
}

let tracer: Tracer | undefined;

/** The workflow's tracer: Temporal's span exporter (the sink), the run-seeded ids. */
function workflowTracer(): Tracer {
  tracer ??= new BasicTracerProvider({
    idGenerator: new RunSeededIdGenerator(),
    spanProcessors: [new SimpleSpanProcessor(new SpanExporter())],
  }).getTracer('@temporalio/interceptor-workflow');
  return tracer;
}

/**
 * `call` in a span `name`, a child of `parent`, active while `call` runs (and in what it
 * awaits): returns `call`'s own promise, the span ended beside it (status `ERROR` with the
 * error recorded when it rejects, unless `expected` says the rejection is a normal end).
 */
function inSpan<T>(
  name: string,
  parent: Context,
  attributes: Attributes,
  call: () => Promise<T>,
  expected: (error: unknown) => boolean = () => false,
): Promise<T> {
  const span = workflowTracer().startSpan(name, { attributes }, parent);
  const failed = (error: unknown) => {
    if (expected(error)) {
      span.setStatus({ code: SpanStatusCode.OK });
    } else {
      // Name and code only: a failure's message may quote a hook's reason or a prompt.
      const message = errorLabel(error);
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      span.recordException({ name: error instanceof Error ? error.name : 'Error', message });
    }
    span.end();
  };
  let result: Promise<T>;
  try {
    result = context.with(trace.setSpan(parent, span), call);
  } catch (error) {
    failed(error);
    throw error;
  }
  result.then(() => {
    span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  }, failed);
  return result;
}

const isContinueAsNew = (error: unknown) => error instanceof ContinueAsNew;
const spanName = (kind: SpanName, what: string) => `${kind}${SPAN_DELIMITER}${what}`;

/** The session's inbound calls: the run and each Update, in spans; queries, validators, signals as they are. */
class SessionInboundInterceptor extends OpenTelemetryInboundInterceptor {
  public override execute(
    input: WorkflowExecuteInput,
    next: Next<WorkflowInboundCallsInterceptor, 'execute'>,
  ): Promise<unknown> {
    return inSpan(
      spanName(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType),
      extractContextFromHeaders(input.headers) ?? context.active(),
      {},
      () => next(input),
      isContinueAsNew,
    );
  }

  public override handleUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>,
  ): Promise<unknown> {
    return inSpan(
      spanName(SpanName.WORKFLOW_HANDLE_UPDATE, input.name),
      extractContextFromHeaders(input.headers) ?? context.active(),
      { [UPDATE_ID_ATTR_KEY]: input.updateId },
      () => next(input),
    );
  }

  public override handleSignal(
    input: SignalInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>,
  ): Promise<void> {
    return next(input);
  }

  public override handleQuery(
    input: QueryInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>,
  ): Promise<unknown> {
    return next(input);
  }

  public override validateUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>,
  ): void {
    return next(input);
  }
}

/** The session's outbound calls: activities and continue-as-new in spans, the context in their headers. */
class SessionOutboundInterceptor extends OpenTelemetryOutboundInterceptor {
  public override scheduleActivity(
    input: ActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>,
  ): Promise<unknown> {
    return inSpan(spanName(SpanName.ACTIVITY_START, input.activityType), context.active(), {}, () =>
      next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  public override scheduleLocalActivity(
    input: LocalActivityInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
  ): Promise<unknown> {
    return inSpan(spanName(SpanName.ACTIVITY_START, input.activityType), context.active(), {}, () =>
      next({ ...input, headers: headersWithContext(input.headers) }),
    );
  }

  public override continueAsNew(
    input: ContinueAsNewInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>,
  ): Promise<never> {
    return inSpan(
      spanName(SpanName.CONTINUE_AS_NEW, input.options.workflowType ?? workflowInfo().workflowType),
      context.active(),
      {},
      () => next({ ...input, headers: headersWithContext(input.headers) }),
      isContinueAsNew,
    );
  }

  public override startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
  ): Promise<[Promise<string>, Promise<unknown>]> {
    return next(input);
  }

  public override signalWorkflow(
    input: SignalWorkflowInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>,
  ): Promise<void> {
    return next(input);
  }

  public override startNexusOperation(
    input: StartNexusOperationInput,
    next: Next<WorkflowOutboundCallsInterceptor, 'startNexusOperation'>,
  ): Promise<StartNexusOperationOutput> {
    return next(input);
  }
}

/** The interceptors the workflow bundler looks for in an interceptor module. */
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new SessionInboundInterceptor()],
  outbound: [new SessionOutboundInterceptor()],
  internals: [new OpenTelemetryInternalsInterceptor()],
});
