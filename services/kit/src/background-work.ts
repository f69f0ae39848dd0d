/**
 * Background work that is no one's request — a job queue's polling, its supervisor, periodic
 * maintenance — runs untraced: otherwise every poll of every replica would be a trace of its own
 * (several a second), burying the traces of real calls and the exporter's capacity. Work done
 * inside a call (a span is active) is traced as usual.
 */
import { context, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';

export function untracedUnlessInCall<T>(fn: () => T): T {
  if (trace.getActiveSpan()) return fn();
  return context.with(suppressTracing(context.active()), fn);
}
