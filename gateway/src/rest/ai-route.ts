/**
 * The pipeline every AI route (POST /transcribe, POST /convert) runs through, in this order:
 *  1. the key is verified (requireKey, before this);
 *  2. Idempotency-Key: a key whose first request still runs → 409; a finished one → its stored
 *     response is replayed for the same parameters (`Idempotent-Replayed: true`, nothing charged)
 *     or 409 for other parameters;
 *  3. admission by billing — credits, spending cap and the rate limit — BEFORE the body is read,
 *     so a user with nothing left is refused before uploading 500 MB; except for a body the
 *     route declares small enough to read first (a short POST /convert): billing then admits
 *     the call at its reservation, in the same round trip, with the same checks in the same
 *     order, and the window comes back with the result;
 *  4. the body is read and the operation executes, charging through billing with the admission
 *     and the idempotency key; RateLimit-* headers go on every response, errors included.
 * A response is stored for replay once execution began (2xx, and the 5xx of a failed engine);
 * requests refused before that (validation, billing, conflicts), bodies that stopped arriving
 * (408) and requests whose client went away — also before this ran — leave the key free for a
 * retry. A client that half-closed after sending its whole request is still answered (server.ts).
 */
import type { Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import type { billing } from '@murmur/proto';
import { MurmurError, toErrorBody } from '@murmur/contract';
import { asPublicError, type Logger, type ServiceClients } from '@murmur/kit';
import type { IdempotencyStore, StoredResponse } from '../idempotency/store';
import { admit, type OperationContext } from '../operations';
import { idempotencyKeyOf } from './idempotency-key';
import { rateLimitOfError, setRateLimitHeaders } from './rate-limit-headers';
import { sendError } from '../http/errors';
import { callNote } from '../http/call-note';
import { clientGone } from '../http/client-gone';

/** What an executing AI operation gets from the pipeline. */
export interface AiCall {
  /** From billing's admission: the charge does not take a second rate-limit slot. '' → the charge admits the call. */
  admissionId: string;
  /** The caller's Idempotency-Key, or a fresh one: makes the credit reservation idempotent. */
  idempotencyKey: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Where a charge that admitted the call itself reports the rate-limit window. */
  onRateLimit: (state: billing.RateLimitState) => void;
}

export interface AiRouteSpec<I> {
  operation: billing.Operation;
  /** Reads and validates the body. */
  read(req: Request, res: Response, signal: AbortSignal): Promise<I>;
  /** The parameters' fingerprint; called after execute (a streamed upload is hashed as it flows). */
  fingerprint(input: I): string;
  /** Reads the whole body only to fingerprint it (the replay check; nothing executes). */
  fingerprintOf(req: Request, res: Response, signal: AbortSignal): Promise<string>;
  /** Executes and renders the success response. */
  execute(ctx: OperationContext, input: I, call: AiCall): Promise<StoredResponse>;
  /**
   * True when this request's body may be read before the call is admitted, its charge admitting
   * it instead (one billing round trip fewer): only for bodies small enough that reading one
   * costs nothing worth refusing early. Absent: always admitted first.
   */
  readsBeforeAdmission?(req: Request): boolean;
}

/** Failures stored for replay: the engine ran and failed, or a bug; everything else may be retried. */
const STORED_FAILURES = new Set(['conversion_failed', 'transcription_failed', 'internal_error']);

/**
 * A service's refusal of the request's idempotency key names its gRPC field (`idempotency_key`);
 * over REST the key is the `Idempotency-Key` header, as the gateway's own 409s name it.
 */
function restParam(e: MurmurError): MurmurError {
  return e.param === 'idempotency_key' ? new MurmurError(e.code, e.message, { param: 'Idempotency-Key', ...(e.meta ? { meta: e.meta } : {}) }) : e;
}

function conflict(message: string): MurmurError {
  return new MurmurError('idempotency_conflict', message, { param: 'Idempotency-Key' });
}

function send(res: Response, stored: StoredResponse, replayed: boolean): void {
  if (replayed && stored.status >= 400) noteReplayedError(stored);
  res.status(stored.status);
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.end(stored.body);
}

/** A replayed failure's code, for the request log (its body is the contract's error body we stored). */
function noteReplayedError(stored: StoredResponse): void {
  const note = callNote();
  if (!note) return;
  try {
    const code = (JSON.parse(stored.body) as { error?: { code?: unknown } }).error?.code;
    if (typeof code === 'string') note.errorCode = code;
  } catch {
    // Not ours to judge here: the replay is sent as stored.
  }
}

function errorResponse(req: Request, err: MurmurError): StoredResponse {
  return {
    status: err.httpStatus,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(toErrorBody(err, req.requestId)),
  };
}

/** Stands for "any parameters": a failure whose upload could not be fingerprinted binds the key. */
const WILDCARD = '*';

function fingerprintOrWildcard<I>(spec: AiRouteSpec<I>, input: I | undefined): string {
  try {
    return input === undefined ? WILDCARD : spec.fingerprint(input);
  } catch {
    return WILDCARD;
  }
}

/**
 * A request answered before its body was read (a 409, a refused upload of up to 500 MB): the
 * connection closes after the answer instead of reading the rest.
 */
function closeUnread(req: Request, res: Response): void {
  if (!req.complete) res.setHeader('Connection', 'close');
}

/** The caller's rate-limit window without taking a slot; undefined when billing cannot say (the answer goes without the headers). */
async function currentWindow(clients: ServiceClients, userId: string): Promise<billing.RateLimitState | undefined> {
  return (await clients.billing.getRateLimit({ userId }, { deadlineMs: 2_000 }).catch(() => undefined))?.rateLimit;
}

export function aiRoute<I>(clients: ServiceClients, store: IdempotencyStore, log: Logger, spec: AiRouteSpec<I>) {
  return async (req: Request, res: Response): Promise<void> => {
    const principal = req.principal!;
    const owner = principal.userId;
    const ctx: OperationContext = { principal, clients };
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    // Gone while the key was checked (its close is past): every read below fails at once, and the key is freed.
    if (res.destroyed || clientGone(req)) controller.abort();

    const key = idempotencyKeyOf(req);
    if (key) {
      // Without its store the pipeline cannot promise "once": refuse rather than risk charging twice.
      const existing = await store.claim(owner, key, null).catch((err: unknown) => {
        log.warn({ err: (err as Error).message }, 'idempotency store unavailable');
        throw new MurmurError('service_unavailable');
      });
      if (!existing.claimed) {
        const { record } = existing;
        if (record.state === 'running') {
          closeUnread(req, res);
          throw conflict('A request with this Idempotency-Key is still running. Retry after it finishes.');
        }
        const fingerprint = await spec.fingerprintOf(req, res, controller.signal);
        if (record.fingerprint !== WILDCARD && fingerprint !== record.fingerprint) {
          throw conflict('This Idempotency-Key was used with other parameters. Use a new key for a new request.');
        }
        setRateLimitHeaders(res, (await clients.billing.getRateLimit({ userId: owner })).rateLimit);
        send(res, record.response, true);
        return;
      }
    }

    let began = false;
    let input: I | undefined;
    let windowShown = false;
    const showWindow = (state: billing.RateLimitState | undefined) => {
      setRateLimitHeaders(res, state);
      windowShown ||= state !== undefined;
    };
    const admitFirst = !spec.readsBeforeAdmission?.(req);
    try {
      let admissionId = '';
      if (admitFirst) {
        const admission = await admit(ctx, spec.operation);
        showWindow(admission.rateLimit);
        admissionId = admission.admissionId;
      }
      input = await spec.read(req, res, controller.signal);
      began = true;
      const response = await spec.execute(ctx, input, {
        admissionId,
        idempotencyKey: key ?? `auto_${randomUUID()}`,
        signal: controller.signal,
        onRateLimit: showWindow,
      });
      // Admitted by its charge, but no slot taken (billing replayed a reservation): the window as it stands.
      if (!windowShown) showWindow(await currentWindow(clients, owner));
      // The work is done and charged: a record that cannot be stored (Redis down) must not turn it into a failure.
      if (key) {
        await store.complete(owner, key, spec.fingerprint(input), response).catch((err: unknown) => {
          log.warn({ err: (err as Error).message }, 'idempotency record not stored; the response is sent anyway');
        });
      }
      send(res, response, false);
    } catch (err) {
      // The client went away: nothing is answered or kept, and its key is free for the retry.
      const gone = controller.signal.aborted || (err as Error)?.name === 'AbortError';
      // What the abort broke is no bug: it is neither logged nor answered.
      const e = restParam(gone && !(err instanceof MurmurError) ? new MurmurError('internal_error') : asPublicError(err, log, { path: req.path }));
      if (key) {
        if (began && !gone && STORED_FAILURES.has(e.code)) {
          await store.complete(owner, key, fingerprintOrWildcard(spec, input), errorResponse(req, e)).catch(() => undefined);
        } else {
          await store.release(owner, key).catch(() => undefined);
        }
      }
      if (gone && (controller.signal.aborted || res.destroyed)) return;
      if (e.code === 'rate_limit_exceeded') showWindow(rateLimitOfError(e));
      // Refused before its charge admitted it (a bad body, a recording not found): the window as
      // it stands. A 402 carries none on any path (the OpenAPI document's responses say so), nor
      // does a 5xx here: billing may be what failed, and asking it again would only delay the
      // answer (by up to the 2 s deadline, in an outage).
      if (!windowShown && !admitFirst && e.httpStatus < 500 && e.httpStatus !== 402) showWindow(await currentWindow(clients, owner));
      closeUnread(req, res);
      sendError(req, res, e);
    }
  };
}
