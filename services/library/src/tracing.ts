/** Loaded by main.ts before anything else: OpenTelemetry must patch http, grpc, pg and redis before they load. */
import { startTracing } from '@murmur/kit/tracing';

startTracing('library');
