/** Loaded by main.ts before anything else: OpenTelemetry must patch http, express, grpc and redis before they load. */
import { startTracing } from '@murmur/kit/tracing';

startTracing('gateway');
