/**
 * MCP for clients on the current revision, 2026-07-28: the v2 SDK's createMcpHandler (stateless
 * requests carrying their own `_meta` envelope, `server/discover` instead of the initialize
 * handshake), a fresh server per request from the same tool definitions as the 2025 era
 * (legacy-server.ts). Tasks left the core protocol in this revision (an extension the SDK does not
 * implement), so here `transcribe` runs within its request and, given a progressToken, streams
 * its progress (the response becomes SSE at the first notification). handler.ts routes.
 */
import type { Response } from 'express';
import { createMcpHandler, McpServer, type AuthInfo, type CallToolResult, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { Logger } from '@murmur/kit';
import type { OperationContext } from '../operations';
import { LIST_CACHE_HINTS, SERVER_INFO } from './server-info';
import { callTool, type ToolCall } from './tool-calls';
import { callableTools, TOOLS } from './tools';
import { writeWebResponse } from './web-exchange';

/** Where this request's caller rides to the server factory (authInfo is the SDK's pass-through). */
const CALLER = 'dev.murmur/caller';
interface Caller {
  ctx: OperationContext;
  publicUrl: string;
}

/**
 * A tool's schema whose JSON Schema is made once, at load: the SDK converts a schema when a
 * server lists or dispatches to it, and every request has a fresh server (measured in bench mcp:
 * that conversion was most of this era's extra gateway CPU per call).
 */
function convertedOnce(schema: z.ZodObject): StandardSchemaWithJSON {
  const std = schema['~standard'];
  const input = std.jsonSchema.input({ target: 'draft-2020-12' });
  const output = std.jsonSchema.output({ target: 'draft-2020-12' });
  return { '~standard': { ...std, jsonSchema: { input: () => input, output: () => output } } };
}

const REGISTERED = TOOLS.map((tool) => ({
  name: tool.name,
  config: { ...tool.config, inputSchema: convertedOnce(tool.config.inputSchema), outputSchema: convertedOnce(tool.config.outputSchema) },
}));

function serverFor(caller: Caller, version: string, log: Logger): McpServer {
  const server = new McpServer({ ...SERVER_INFO, version }, { capabilities: { tools: { listChanged: false } }, cacheHints: LIST_CACHE_HINTS });
  for (const tool of REGISTERED) {
    // tools/list is McpServer's, from these registrations; tools/call is below.
    server.registerTool(tool.name, tool.config, () => {
      throw new Error('tools/call is handled below');
    });
  }
  const tools = callableTools(caller.ctx, caller.publicUrl);
  // As in the 2025 era (tool-calls.ts): every failure is the contract's error as an isError result.
  server.server.setRequestHandler('tools/call', async (request, extra) => {
    const token = extra.mcpReq._meta?.progressToken;
    const call: ToolCall = {
      signal: extra.mcpReq.signal,
      // Every revision this handler serves (2026-07-28 on) has structuredContent.
      structuredContentKnown: true,
      ...(token !== undefined
        ? { progress: (progress: number, total: number, message: string) => extra.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } }) }
        : {}),
    };
    const { name, arguments: args } = request.params;
    return (await callTool(tools.get(name), name, args, log, call)) as CallToolResult;
  });
  return server;
}

/** Serves one 2026-07-28 JSON-RPC message (already read, authenticated and scope-checked). */
export function modernMcp(version: string, log: Logger) {
  const handler = createMcpHandler(({ authInfo }) => serverFor(authInfo?.extra?.[CALLER] as Caller, version, log), {
    legacy: 'reject',
    responseMode: 'auto',
    // Refusals the SDK answers itself (a malformed envelope, an unsupported revision): no content logged.
    onerror: (err) => log.info({ reason: err.message.slice(0, 200) }, 'mcp request refused by the protocol layer'),
  });
  return async (res: Response, request: globalThis.Request, body: unknown, ctx: OperationContext, publicUrl: string): Promise<void> => {
    const caller: Caller = { ctx, publicUrl };
    const authInfo: AuthInfo = { token: '', clientId: ctx.principal.clientId || ctx.principal.keyId, scopes: [...ctx.principal.scopes], extra: { [CALLER]: caller } };
    const response = await handler.fetch(request, { parsedBody: body, authInfo });
    await writeWebResponse(res, response);
  };
}
