/** The instrumentations every Murmur process runs, configured so no secret or transcript is recorded. */
import type { Instrumentation } from '@opentelemetry/instrumentation';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { RedisInstrumentation } from '@opentelemetry/instrumentation-redis';

/** Probes and health checks are not traced: they would drown the traces people look for. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);

export function getNodeAutoInstrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => PROBE_PATHS.has((req.url ?? '').split('?')[0] ?? ''),
      // OTLP export itself is HTTP: never trace the exporter's own requests.
      ignoreOutgoingRequestHook: (req) => (req.path ?? '').startsWith('/v1/traces'),
    }),
    new ExpressInstrumentation(),
    new GrpcInstrumentation({ ignoreGrpcMethods: ['Check', 'Watch', 'ServerReflectionInfo'] }),
    new PgInstrumentation({ enhancedDatabaseReporting: false }),
    new RedisInstrumentation({ dbStatementSerializer: (command) => command }),
  ];
}
