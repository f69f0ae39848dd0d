/**
 * The read side of transcription jobs that is not plain JSON:
 * - GET /transcriptions/{id}: the job; with `response_format=text|srt|vtt` a completed job's
 *   transcript in that format (409 `transcription_not_ready` before it completed);
 * - GET /transcriptions/{id}/events: Server-Sent Events — an `event: <status>` with the job as
 *   `data` now and at every change of status or progress, ending with the event of the status
 *   it ended in (`completed`, `failed`, `canceled`), after which the server closes the stream. A
 *   comment line every 15 s keeps proxies from closing an idle stream. A job that has already
 *   ended gets its one final event.
 */
import type { Request, Response } from 'express';
import { toErrorBody } from '@murmur/contract';
import { asPublicError, type Logger, type ServiceClients } from '@murmur/kit';
import * as ops from '../operations';
import type { RouteOf } from '../routes';
import type { ParsedQuery } from './query';
import { render } from './transcript-response';

/** Keeps an idle event stream open through proxies that close silent connections. */
export const SSE_KEEPALIVE_MS = 15_000;

export function transcriptionRoute(clients: ServiceClients) {
  return async (req: Request, res: Response, query: ParsedQuery<RouteOf<'getTranscription'>['query']>): Promise<void> => {
    const ctx: ops.OperationContext = { principal: req.principal!, clients };
    const format = ops.transcriptFormatOf(query.response_format);
    // Captions are cut on the words: read them for srt and vtt too.
    const job = await ops.getTranscription(ctx, String(req.params.id), { words: (query.words ?? false) || format === 'srt' || format === 'vtt' });
    if (format === 'json') {
      res.json(job);
      return;
    }
    const stored = render(ops.completedResult(job), format);
    res.status(stored.status);
    for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
    res.end(stored.body);
  };
}

export function transcriptionEventsRoute(clients: ServiceClients, log: Logger) {
  return async (req: Request, res: Response): Promise<void> => {
    const ctx: ops.OperationContext = { principal: req.principal!, clients };
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const events = ops.watchTranscription(ctx, String(req.params.id), controller.signal)[Symbol.asyncIterator]();
    // The first message decides the answer: an unknown or foreign id is a plain 404 in the contract's body.
    const first = await events.next();
    res.status(200);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    const keepalive = setInterval(() => res.write(': keep-alive\n\n'), SSE_KEEPALIVE_MS);
    let sequence = 0;
    const send = (job: ReturnType<typeof ops.presentJob>) => res.write(`id: ${++sequence}\nevent: ${job.status}\ndata: ${JSON.stringify(job)}\n\n`);
    try {
      if (!first.done) send(first.value);
      for (let next = first.done ? first : await events.next(); !next.done; next = await events.next()) send(next.value);
    } catch (err) {
      // Headers are gone: the stream ends with an `error` event in the contract's shape.
      if (!controller.signal.aborted) {
        res.write(`event: error\ndata: ${JSON.stringify(toErrorBody(asPublicError(err, log, { path: req.path }), req.requestId))}\n\n`);
      }
    } finally {
      clearInterval(keepalive);
      await events.return?.(undefined);
      res.end();
    }
  };
}
