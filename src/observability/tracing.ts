import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Config, spanDestinationOf } from '../config/index.js';
import { ConfigError } from '../errors/index.js';
import type { StageObserver } from '../request/stage-timing.js';
import { VERSION } from '../version.js';

// Types only: erased at build time, so nothing of OpenTelemetry loads while tracing is off.
type Api = typeof import('@opentelemetry/api');
type Span = import('@opentelemetry/api').Span;
type Tracer = import('@opentelemetry/api').Tracer;
type Context = import('@opentelemetry/api').Context;

/**
 * What rankd needs of an OpenTelemetry `SpanExporter` (e.g. `InMemorySpanExporter`), declared here
 * so rankd's types do not depend on the SDK, an optional install.
 */
export interface SpanExporterLike {
  /** Receives finished spans; calls `resultCallback` with code 0 once they are stored. */
  export(spans: unknown[], resultCallback: (result: { code: number; error?: Error }) => void): void;
  /** Called once when the server closes. */
  shutdown(): Promise<void>;
}

/** The packages tracing needs beyond `@opentelemetry/api`, and the one OTLP export adds. */
const SDK_PACKAGES = ['@opentelemetry/sdk-trace', '@opentelemetry/resources'];
const OTLP_PACKAGE = '@opentelemetry/exporter-trace-otlp-http';

/** Imports an optional package, or says which to install: the SDK is the app's choice and install. */
async function importOptional<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    const needed = [...SDK_PACKAGES, ...(name === OTLP_PACKAGE ? [OTLP_PACKAGE] : [])];
    throw new ConfigError([
      `OTEL_EXPORTER (tracing on) needs ${name}, which is not installed: npm install ${needed.join(' ')}`,
    ]);
  }
}

/**
 * A `performance.now()` reading as OpenTelemetry's [seconds, nanoseconds] since the epoch, all
 * from the same origin. Given plain numbers, the SDK adds an offset it recomputes per span from
 * `Date.now()` (whole ms), so sub-millisecond stages would jitter against each other by up to 1 ms.
 */
function hrTimeOf(reading: number): [number, number] {
  const epochMs = performance.timeOrigin + reading;
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.min(999_999_999, Math.round((epochMs - seconds * 1000) * 1e6))];
}

/** W3C `traceparent`: version, trace id, parent span id, flags. */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Spans per request and per pipeline stage. Stage spans are made when the stage has ended, from
 * the two clock readings the stage timing takes anyway, as children of the request's span; a
 * caller's `traceparent` header makes the request's span part of the caller's trace.
 */
export class RequestTracing {
  readonly #api: Api;
  readonly #tracer: Tracer;
  readonly #shutdown: () => Promise<void>;
  readonly #spans = new WeakMap<FastifyRequest, Span>();

  private constructor(api: Api, tracer: Tracer, shutdown: () => Promise<void>) {
    this.#api = api;
    this.#tracer = tracer;
    this.#shutdown = shutdown;
  }

  /**
   * Starts tracing for one server: loads the SDK (dynamically: only now), makes a tracer provider
   * of its own that exports to `exporter`, else to the console or OTLP/HTTP per the config.
   */
  static async start(config: Config, exporter?: SpanExporterLike): Promise<RequestTracing> {
    const api = await import('@opentelemetry/api');
    const sdk = await importOptional('@opentelemetry/sdk-trace', () => import('@opentelemetry/sdk-trace'));
    const resources = await importOptional(
      '@opentelemetry/resources',
      () => import('@opentelemetry/resources'),
    );
    type SdkExporter = ConstructorParameters<typeof sdk.SimpleSpanProcessor>[0]['exporter'];
    let processor: InstanceType<typeof sdk.SimpleSpanProcessor> | InstanceType<typeof sdk.BatchSpanProcessor>;
    if (exporter !== undefined) {
      // Given exporters are for tests and embedders who read spans at once: no batching delay.
      processor = new sdk.SimpleSpanProcessor({ exporter: exporter as SdkExporter });
    } else if (config.OTEL_EXPORTER === 'console') {
      processor = new sdk.SimpleSpanProcessor({ exporter: new sdk.ConsoleSpanExporter() });
    } else {
      const otlp = await importOptional(
        OTLP_PACKAGE,
        () => import('@opentelemetry/exporter-trace-otlp-http'),
      );
      const url = `${spanDestinationOf(config).replace(/\/+$/, '')}/v1/traces`;
      processor = new sdk.BatchSpanProcessor({ exporter: new otlp.OTLPTraceExporter({ url }) });
    }
    const provider = new sdk.TracerProvider({
      resource: resources.resourceFromAttributes({
        'service.name': 'rankd',
        // Several apps' spans in one tracing backend are told apart by the project, as their keys are.
        'service.namespace': config.PROJECT_NAME,
        'service.version': VERSION,
      }),
      spanProcessors: [processor],
    });
    return new RequestTracing(api, provider.getTracer('rankd', VERSION), () => provider.shutdown());
  }

  /** Starts a span when a request arrives and ends it when the response is sent. */
  install(server: FastifyInstance): void {
    const { SpanKind, SpanStatusCode } = this.#api;
    server.addHook('onRequest', (request, _reply, done) => {
      const route = request.is404 ? 'unknown' : (request.routeOptions.url ?? 'unknown');
      const span = this.#tracer.startSpan(
        `${request.method} ${route}`,
        {
          kind: SpanKind.SERVER,
          startTime: hrTimeOf(performance.now()),
          attributes: {
            'http.request.method': request.method,
            'http.route': route,
            'url.path': request.url.split('?')[0] ?? '',
            'rankd.request_id': request.id,
          },
        },
        this.#parentOf(request.headers.traceparent),
      );
      this.#spans.set(request, span);
      done();
    });
    server.addHook('onResponse', (request, reply, done) => {
      const span = this.#spans.get(request);
      if (span !== undefined) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end(hrTimeOf(performance.now()));
      }
      done();
    });
    server.addHook('onClose', async () => this.shutdown());
  }

  /** Exports what is pending and stops; the server's close calls it. */
  shutdown(): Promise<void> {
    return this.#shutdown();
  }

  /** An observer that makes a span per stage under the request's span, and tells `next` too. */
  stageObserver(request: FastifyRequest, next: StageObserver | undefined): StageObserver {
    const span = this.#spans.get(request);
    const parent = span === undefined ? undefined : this.#api.trace.setSpan(this.#api.ROOT_CONTEXT, span);
    return {
      stage: (pipeline, stage, start, end) => {
        next?.stage(pipeline, stage, start, end);
        this.#tracer
          .startSpan(
            stage,
            { startTime: hrTimeOf(start), attributes: { 'rankd.pipeline': pipeline, 'rankd.stage': stage } },
            parent,
          )
          .end(hrTimeOf(end));
      },
    };
  }

  /** The caller's trace, from a valid `traceparent` header; else a new trace. */
  #parentOf(traceparent: string | string[] | undefined): Context | undefined {
    const match = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent.trim()) : null;
    if (match === null) return undefined;
    const [, traceId = '', spanId = '', flags = '00'] = match;
    const spanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
    if (!this.#api.trace.isSpanContextValid(spanContext)) return undefined;
    return this.#api.trace.setSpanContext(this.#api.ROOT_CONTEXT, spanContext);
  }
}
