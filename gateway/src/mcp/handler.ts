/**
 * The hosted MCP server at /mcp: the Streamable HTTP transport of the MCP SDK in stateless
 * mode (a fresh server and transport per request, so any gateway replica answers any request).
 * Before any JSON-RPC handling: Origin validation (DNS-rebinding protection), then the bearer
 * key or OAuth access token (401 with the contract's body and a WWW-Authenticate that points at
 * the Protected Resource Metadata), then the token's scope for the method (403 insufficient_scope). GET (no server-initiated stream in
 * stateless mode) and DELETE (no sessions) answer 405.
 */
import type { NextFunction, Request, Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { MurmurError, type Logger } from '@murmur/kit';
import type { AudioUrlPolicy } from '../audio-url/fetch-audio';
import type { Clients } from '../clients';
import type { VerifiedKeyCache } from '../key-cache';
import { requireKey as requireKeyMiddleware } from '../http/authenticate';
import { readJsonBody } from '../http/json-body';
import { MCP_MAX_BODY_BYTES, mcpAudioTooLarge } from './body-limit';
import { jobTaskStore, TASK_CAPABILITIES, TASK_POLL_INTERVAL_MS } from './tasks';
import { registerTools } from './tools';
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

/** A tools/call that passed `_meta.progressToken`. */
function wantsProgress(body: unknown): boolean {
  const params = (body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null)?.params;
  return (body as { method?: unknown } | null)?.method === 'tools/call' && params?._meta?.progressToken !== undefined;
}

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

export function mcpHandlers(opts: McpOptions) {
  // The transcribe tool's base64 audio is the only argument that can fill a body this size.
  const bodyOptions = { limit: MCP_MAX_BODY_BYTES, idleTimeoutMs: opts.bodyIdleTimeoutMs, anyContentType: true, tooLarge: mcpAudioTooLarge };
  // One validator for every request's server (each would otherwise build its own Ajv).
  const jsonSchemaValidator = new AjvJsonSchemaValidator();

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
    const server = new McpServer(
      { name: 'murmur', version: opts.version },
      {
        capabilities: { tools: {}, logging: {}, tasks: TASK_CAPABILITIES },
        jsonSchemaValidator,
        // Tasks are the caller's transcription jobs (tasks.ts); tasks/result waits polling this often.
        taskStore: jobTaskStore(ctx, opts.log),
        defaultTaskPollInterval: TASK_POLL_INTERVAL_MS,
      },
    );
    registerTools(server, ctx, opts.log, publicUrlOf(req, oauth));
    // One JSON answer, unless the call asked for progress: then an SSE response carries the
    // notifications/progress messages before the result (clients reset their timeout on each).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const notAllowed = () => {
    throw new MurmurError('method_not_allowed', 'This MCP server is stateless: POST JSON-RPC messages to /mcp (no GET stream, no sessions to DELETE).', {
      meta: { allow: 'POST' },
    });
  };

  return { checkOrigin, requireKey, post, notAllowed };
}
