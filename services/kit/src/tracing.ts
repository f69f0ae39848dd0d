/**
 * OpenTelemetry for a Murmur process: HTTP, express, gRPC, pg and redis instrumentation and W3C
 * trace context, so one REST or MCP call is one trace across the gateway and every service it
 * touches. Each process loads this FIRST (its `src/tracing.ts`, imported on main.ts's first
 * line), before http, grpc, pg or redis are required, so the instrumentations can patch them.
 *
 * Export follows the standard variables: OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_TRACES_EXPORTER is not "none", sampled as
 * OTEL_TRACES_SAMPLER says (parent-based always-on by default), batched as the OTEL_BSP_*
 * variables say (the SDK reads them only for a processor of its own making, not ours). With no
 * exporter the tracer still runs but samples nothing: every call gets a valid trace context
 * (trace ids for logs, the response's `traceparent`, propagation over gRPC, an incoming trace id
 * kept) at the price of two random ids per span, while recording spans nobody exports cost a
 * quarter of the gateway's CPU (docs/decisions/0012-tracing.md).
 *
 * Nothing secret reaches a span: no HTTP or gRPC headers or metadata are recorded, pg records
 * statements without their parameters, and redis records the command name only (its arguments
 * hold cached principals and stored responses).
 */
import { getNodeAutoInstrumentations } from './tracing-instrumentations';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, BatchSpanProcessor, NoopSpanProcessor } from '@opentelemetry/sdk-trace';
import { getNumberFromEnv } from '@opentelemetry/core';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { addFinalShutdownStep } from './shutdown';

let sdk: NodeSDK | undefined;

/** Whether the standard OTEL_* variables ask for an OTLP exporter. */
export function otlpExportConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if ((env.OTEL_TRACES_EXPORTER ?? '').split(',').includes('none')) return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/** Starts tracing once per process; `service` names it (OTEL_SERVICE_NAME wins). */
export function startTracing(service: string): void {
  if (sdk) return;
  const exporting = otlpExportConfigured();
  sdk = new NodeSDK({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME || `murmur-${service}`,
      [ATTR_SERVICE_VERSION]: '0.1.0',
    }),
    // The SDK registers a tracer only when it has a span processor; without one every span would
    // be the API's no-op with an invalid context, and no `traceparent` could be answered.
    ...(exporting
      ? { spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...batchSettingsFromEnv() })] }
      : { spanProcessors: [new NoopSpanProcessor()], sampler: new AlwaysOffSampler() }),
    // Traces only. Left to itself the SDK also records metrics and pushes them (and an OTLP log
    // pipeline) to localhost:4318 every minute, endpoint or not; the standard variables still
    // turn them on when an operator asks.
    ...(process.env.OTEL_METRICS_EXPORTER ? {} : { metricReaders: [] }),
    ...(process.env.OTEL_LOGS_EXPORTER ? {} : { logRecordProcessors: [] }),
    instrumentations: getNodeAutoInstrumentations(exporting),
  });
  sdk.start();
  addFinalShutdownStep(stopTracing);
}

/**
 * The standard batch settings (OTEL_BSP_SCHEDULE_DELAY, …), unset ones left to the SDK's
 * defaults (5 s between exports): sdk-trace 3 no longer reads them in BatchSpanProcessor itself.
 */
function batchSettingsFromEnv() {
  return {
    scheduledDelayMillis: getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: getNumberFromEnv('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: getNumberFromEnv('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
}

/** Flushes and stops the exporter (the last shutdown step of a process). */
export async function stopTracing(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = undefined;
}
