/**
 * The hosted MCP server at /mcp, stateless (a fresh server per request, so any gateway replica
 * answers any request). Before any JSON-RPC handling: Origin validation (DNS-rebinding
 * protection), then the bearer key or OAuth access token (401 with the contract's body and a
 * WWW-Authenticate that points at the Protected Resource Metadata), then the body, then the
 * token's scope for the method (403 insufficient_scope). Then the message goes to the era it is
 * of, as the v2 SDK classifies it: a 2026-07-28 request (its `_meta` envelope) to
 * modern-server.ts, a 2025-era one (initialize first, no envelope) to legacy-server.ts. GET (no
 * server-initiated stream) and DELETE (no sessions) answer 405.
 *
 * The body: one declared at most MCP_SMALL_BODY_BYTES is read whole, as every JSON body. A
 * larger one is read as it arrives (streamed-body.ts) and, once that much has come, read on only
 * for a tools/call of transcribe or convert (else 413), whose token has the scope for it (else
 * 403), while the large bodies being received fit MCP_LARGE_BODIES_BUDGET_BYTES (else 503 with
 * Retry-After), and which billing admits — credits, spending cap, rate limit — before another
 * byte is read (else its 402 or 429, with Retry-After). Each refusal is the contract's error
 * body with `Connection: close`, the rest unread; the admission goes on to the tool's charge.
 */
import type { NextFunction, Request, Response } from 'express';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { MurmurError, REQUEST_LOG_NAME_MAX_CHARS } from '@murmur/contract';
import { type Logger, type ServiceClients } from '@murmur/kit';
import { billing } from '@murmur/proto';
import type { AudioUrlPolicy } from '../upload/fetch-audio';
import type { VerifiedKeyCache } from '../key-cache';
import { requireKey as requireKeyMiddleware } from '../http/authenticate';
import { readJsonBody } from '../http/json-body';
import { admit, MAX_CONVERT_BODY_BYTES } from '../operations';
import { BodyBudget, MCP_MAX_BODY_BYTES, MCP_SMALL_BODY_BYTES, mcpAudioTooLarge, mcpBodiesBusy, mcpBodyTooLarge } from './body-limit';
import { StreamedMcpBody, type BodyProgress, type LargeBodyLimits } from './streamed-body';
import type { McpContext } from './tool-calls';
import { legacyMcp } from './legacy-server';
import { modernMcp } from './modern-server';
import { webRequest } from './web-exchange';
import { BEARER_CHALLENGE_LOCAL } from '../http/errors';
import { mcpChallenge, publicUrlOf, resourceOf, type OAuthResourceOptions } from '../oauth/protected-resource';
import { requireScope } from './scopes';
import { clientGone } from '../http/client-gone';
import { callNote } from '../http/call-note';

export interface McpOptions {
  clients: ServiceClients;
  log: Logger;
  /**
   * Origins allowed to call /mcp from a browser, besides loopback ones (http://localhost:*);
   * a request without Origin (any non-browser client) is always allowed.
   */
  allowedOrigins: string[];
  version: string;
  keyCache?: VerifiedKeyCache;
  /** A body that stops arriving for this long is answered 408 request_timeout (as on /api/v1). */
  bodyIdleTimeoutMs?: number;
  /** Where the transcribe tool's `audio_url` may point (as on /api/v1). */
  audioUrlPolicy?: AudioUrlPolicy;
  /** The MCP server as an OAuth protected resource (its URL, its authorization server). */
  oauth?: OAuthResourceOptions;
}

/** Pages served from this machine (local tools, the MCP Inspector) may call the server. */
function isLoopbackOrigin(origin: string): boolean {
  try {
    const { protocol, hostname } = new URL(origin);
    return (protocol === 'http:' || protocol === 'https:') && ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
  } catch {
    return false;
  }
}

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

/** The only calls whose body may pass the small limit: the operation billing admits, and what the rest may hold. */
const LARGE_CALLS: ReadonlyMap<string, { operation: billing.Operation; limits: LargeBodyLimits }> = new Map([
  [
    'transcribe',
    {
      operation: billing.Operation.OPERATION_TRANSCRIBE,
      // The audio is streamed; the envelope and the other arguments stay within the small limit.
      limits: { maxBodyBytes: MCP_MAX_BODY_BYTES, maxHeldChars: MCP_SMALL_BODY_BYTES, tooLarge: mcpAudioTooLarge },
    },
  ],
  [
    'convert',
    {
      operation: billing.Operation.OPERATION_CONVERT,
      // A transcript is held, as POST /convert holds it.
      limits: {
        maxBodyBytes: MAX_CONVERT_BODY_BYTES,
        maxHeldChars: MAX_CONVERT_BODY_BYTES,
        tooLarge: () => new MurmurError('invalid_request', `The body is larger than a convert call accepts (${MAX_CONVERT_BODY_BYTES} bytes).`, { param: null }),
      },
    },
  ],
]);

/** The body's declared Content-Length, or undefined (chunked, or none). */
function declaredLength(req: Request): number | undefined {
  const declared = Number(req.headers['content-length']);
  return req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) ? declared : undefined;
}

/** Notes what a message asks, for the request log and metrics: the tool a tools/call names, else the JSON-RPC method. */
function noteMcpMessage(message: unknown): void {
  const note = callNote();
  if (!note || typeof message !== 'object' || message === null) return;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  const tool = method === 'tools/call' && typeof params?.name === 'string' ? params.name : typeof method === 'string' ? method : '';
  note.tool = tool.slice(0, REQUEST_LOG_NAME_MAX_CHARS);
}

/** Calls `run` once the response is over (at once when it already is). */
function whenClosed(res: Response, run: () => void): void {
  if (res.destroyed || res.writableFinished) run();
  else res.once('close', run);
}

export function mcpHandlers(opts: McpOptions) {
  const smallBody = { limit: MCP_SMALL_BODY_BYTES, idleTimeoutMs: opts.bodyIdleTimeoutMs, anyContentType: true, tooLarge: mcpBodyTooLarge };
  const largeBodies = new BodyBudget();
  const serveLegacy = legacyMcp(opts.version, opts.log);
  const serveModern = modernMcp(opts.version, opts.log);

  const oauth = opts.oauth ?? {};
  const checkOrigin = (req: Request, res: Response, next: NextFunction) => {
    // Every refusal from here on tells the client where to get a token (RFC 9728 §5.1).
    if (oauth.authorizationServer) res.locals[BEARER_CHALLENGE_LOCAL] = mcpChallenge(req, oauth);
    const origin = req.get('origin');
    if (origin !== undefined && !opts.allowedOrigins.includes(origin) && !isLoopbackOrigin(origin)) {
      throw new MurmurError('forbidden_origin', `Origin ${origin.slice(0, 200)} may not call this MCP server. Call it from a server or an allowed origin.`);
    }
    next();
  };

  const requireKey = requireKeyMiddleware(opts.clients, opts.keyCache, (req) => resourceOf(req, oauth));

  /**
   * A large body past the small limit: read on only for a transcribe or convert call its token
   * may make, while there is room, once billing has admitted it (see the file comment).
   */
  const readOn = async (res: Response, ctx: McpContext, body: StreamedMcpBody, head: Extract<BodyProgress, { done: false }>, declared: number | undefined) => {
    const call = head.method === 'tools/call' && head.tool !== undefined ? LARGE_CALLS.get(head.tool) : undefined;
    if (!call) throw mcpBodyTooLarge();
    requireScope(ctx.principal, { method: head.method, params: { name: head.tool } });
    const release = largeBodies.reserve(Math.min(declared ?? call.limits.maxBodyBytes, call.limits.maxBodyBytes));
    if (!release) throw mcpBodiesBusy();
    whenClosed(res, release);
    const admission = await admit(ctx, call.operation);
    ctx.received = { admissionId: admission.admissionId };
    return body.proceed(call.limits);
  };

  /** The JSON-RPC message (see the file comment); `ctx` learns what the body told. */
  const readMessage = async (req: Request, res: Response, ctx: McpContext): Promise<unknown> => {
    const declared = declaredLength(req);
    if (declared !== undefined && declared > MCP_MAX_BODY_BYTES) throw mcpAudioTooLarge();
    if (declared !== undefined && declared <= MCP_SMALL_BODY_BYTES) return readJsonBody(req, res, smallBody);
    const body = new StreamedMcpBody(req, { idleTimeoutMs: opts.bodyIdleTimeoutMs });
    try {
      let read = await body.next();
      if (!read.done) read = await readOn(res, ctx, body, read, declared);
      if (!read.done) throw new Error('a large /mcp body did not end');
      if (read.audio) ctx.received = { ...ctx.received, audio: read.audio };
      return read.message;
    } catch (err) {
      body.stop();
      throw err;
    }
  };

  const post = async (req: Request, res: Response) => {
    const ctx: McpContext = { principal: req.principal!, clients: opts.clients, audioUrlPolicy: opts.audioUrlPolicy };
    let body: unknown;
    try {
      body = await readMessage(req, res, ctx);
    } catch (err) {
      // The client went away: nobody to answer, and nothing went wrong here.
      if ((err as Error)?.name === 'AbortError' && (res.destroyed || clientGone(req))) return;
      // Answered before the body was read to its end (a stalled or refused body): close rather than read on.
      if (!req.complete) res.setHeader('Connection', 'close');
      throw err;
    }
    if (Array.isArray(body)) {
      // JSON-RPC batching was removed from MCP (2025-06-18); a batch is an invalid request.
      jsonRpcError(res, 400, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per request.');
      return;
    }
    requireScope(req.principal!, body);
    noteMcpMessage(body);
    // One web Request for the era check and the v2 SDK; its signal aborts only when the client
    // goes away before the answer (an abort builds a DOMException: not on every request).
    const aborted = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    const request = webRequest(req, aborted.signal);
    if (await isLegacyRequest(request, body)) await serveLegacy(req, res, body, ctx, publicUrlOf(req, oauth));
    else await serveModern(res, request, body, ctx, publicUrlOf(req, oauth));
  };

  const notAllowed = () => {
    throw new MurmurError('method_not_allowed', 'This MCP server is stateless: POST JSON-RPC messages to /mcp (no GET stream, no sessions to DELETE).', {
      meta: { allow: 'POST' },
    });
  };

  return { checkOrigin, requireKey, post, notAllowed };
}
