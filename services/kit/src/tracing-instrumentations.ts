/** The instrumentations every Murmur process runs, configured so no secret or transcript is recorded. */
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';

/** Probes and health checks are not traced: they would drown the traces people look for. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Query parameters whose values never reach a span (`url.query` shows REDACTED): `q` is what a
 * user searches their notes for (/search, /recordings), `token` a browser's listen token; the
 * rest are the instrumentation's own defaults (signed-URL credentials), kept since setting the list
 * replaces them.
 */
export const REDACTED_QUERY_PARAMS = ['q', 'token', 'sig', 'Signature', 'AWSAccessKeyId', 'X-Goog-Signature', 'X-Amz-Signature', 'X-Amz-Credential', 'X-Amz-Security-Token'];

/**
 * With an exporter, every instrumentation. Without one, only those that carry the trace across
 * hops — HTTP (the `traceparent` every response answers, the trace id in logs) and gRPC (the
 * same trace in every service): express, pg and redis would only make child spans that the
 * always-off sampler never records, and they cost ~4 % of the gateway's CPU (bench/README.md).
 */
export function getNodeAutoInstrumentations(exporting = true): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => PROBE_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
      redactedQueryParamsServer: REDACTED_QUERY_PARAMS,
      // OTLP export itself is HTTP: never trace the exporter's own requests.
      ignoreOutgoingRequestHook: (req) => (req.path ?? '').startsWith('/v1/traces'),
    }),
    new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch', 'ServerReflectionInfo'] }),
    ...(exporting
      ? [new ExpressInstrumentation(), new PgInstrumentation({ enhancedDatabaseReporting: false }), new RedisInstrumentation({ dbStatementSerializer: (command: string) => command })]
      : []),
  ];
}
