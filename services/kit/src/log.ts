/**
 * Structured JSON logs (pino). Every line carries the service name and, inside a call, its
 * request_id and trace_id. Keys, audio and transcript text are never logged: callers log ids
 * and sizes only, and the redaction list below catches the usual suspects anyway.
 */
import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';
import { currentContext } from './context';

export type { Logger } from 'pino';

const REDACT = [
  'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization',
  'key', '*.key', 'apiKey', '*.apiKey', 'transcript', '*.transcript', 'text', '*.text',
  'audio', '*.audio', 'audio_base64', '*.audio_base64', 'content', '*.content',
];

/** `destination` (default stdout) lets a test read the lines a component logs. */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service },
    messageKey: 'msg',
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    redact: { paths: REDACT, censor: '[redacted]' },
    mixin() {
      const out: Record<string, string> = {};
      const ctx = currentContext();
      if (ctx) out.request_id = ctx.requestId;
      const span = trace.getActiveSpan()?.spanContext();
      if (span && span.traceId !== '00000000000000000000000000000000') out.trace_id = span.traceId;
      return out;
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
