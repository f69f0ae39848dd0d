/** Loaded by main.ts before anything else: OpenTelemetry must patch http and grpc before they load. */
import { startTracing } from '@murmur/kit/tracing';

startTracing('transcription');
