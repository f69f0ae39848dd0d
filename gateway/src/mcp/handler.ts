/**
 * The hosted MCP server at /mcp, stateless (a fresh server per request, so any gateway replica
 * answers any request). Before any JSON-RPC handling: Origin validation (DNS-rebinding
 * protection), then the bearer key or OAuth access token (401 with the contract's body and a
 * WWW-Authenticate that points at the Protected Resource Metadata), then the token's scope for
 * the method (403 insufficient_scope). Then the message goes to the era it is of, as the v2 SDK
 * classifies it: a 2026-07-28 request (its `_meta` envelope) to modern-server.ts, a 2025-era
 * one (initialize first, no envelope) to legacy-server.ts. GET (no server-initiated stream)
 * and DELETE (no sessions) answer 405.
 */
import type { NextFunction, Request, Response } from 'express';
import { isLegacyRequest } from '@modelcontextprotocol/server';
import { MurmurError, type Logger } from '@murmur/kit';
import type { AudioUrlPolicy } from '../audio-url/fetch-audio';
import type { Clients } from '../clients';
import type { VerifiedKeyCache } from '../key-cache';
import { requireKey as requireKeyMiddleware } from '../http/authenticate';
import { readJsonBody } from '../http/json-body';
import { MCP_MAX_BODY_BYTES, mcpAudioTooLarge } from './body-limit';
import { legacyMcp } from './legacy-server';
import { modernMcp } from './modern-server';
import { webRequest } from './web-exchange';
import { BEARER_CHALLENGE_LOCAL } from '../http/errors';
import { mcpChallenge, publicUrlOf, resourceOf, type OAuthResourceOptions } from '../oauth/protected-resource';
import { requireScope } from './scopes';

export interface McpOptions {
  clients: Clients;
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

export function mcpHandlers(opts: McpOptions) {
  // The transcribe tool's base64 audio is the only argument that can fill a body this size.
  const bodyOptions = { limit: MCP_MAX_BODY_BYTES, idleTimeoutMs: opts.bodyIdleTimeoutMs, anyContentType: true, tooLarge: mcpAudioTooLarge };
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

  const post = async (req: Request, res: Response) => {
    let body: unknown;
    try {
      body = await readJsonBody(req, res, bodyOptions);
    } catch (err) {
      // Answered before the body was read to its end (a stalled body): close rather than read on.
      if (!req.complete) res.setHeader('Connection', 'close');
      throw err;
    }
    if (Array.isArray(body)) {
      // JSON-RPC batching was removed from MCP (2025-06-18); a batch is an invalid request.
      jsonRpcError(res, 400, -32600, 'Invalid Request: JSON-RPC batches are not supported; send one message per request.');
      return;
    }
    requireScope(req.principal!, body);
    const ctx = { principal: req.principal!, clients: opts.clients, audioUrlPolicy: opts.audioUrlPolicy };
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
