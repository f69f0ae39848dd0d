/**
 * MCP for clients on the 2025 revisions (2025-11-25, 2025-06-18, 2025-03-26): the v1 SDK's
 * Streamable HTTP transport in stateless mode, a fresh server and transport per request (any
 * gateway replica answers any request), with the eight tools of tools.ts and MCP tasks backed by
 * transcription jobs (tasks.ts). The current revision is modern-server.ts's; handler.ts routes.
 */
import type { Request, Response } from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { Logger } from '@murmur/kit';
import type { OperationContext } from '../operations';
import { jobTaskStore, TASK_CAPABILITIES, TASK_POLL_INTERVAL_MS } from './tasks';
import { handleToolCalls } from './tool-calls';
import { callableTools, TOOLS } from './tools';
import { SERVER_INFO } from './server-info';
import { UNDECLARED_REVISION } from './text-copy';

/** A tools/call that passed `_meta.progressToken`. */
function wantsProgress(body: unknown): boolean {
  const params = (body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | null)?.params;
  return (body as { method?: unknown } | null)?.method === 'tools/call' && params?._meta?.progressToken !== undefined;
}

/** Serves one 2025-era JSON-RPC message (already read, authenticated and scope-checked). */
export function legacyMcp(version: string, log: Logger) {
  // One validator for every request's server (each would otherwise build its own Ajv).
  const jsonSchemaValidator = new AjvJsonSchemaValidator();
  return async (req: Request, res: Response, body: unknown, ctx: OperationContext, publicUrl: string): Promise<void> => {
    const server = new McpServer(
      { ...SERVER_INFO, version },
      {
        capabilities: { tools: {}, logging: {}, tasks: TASK_CAPABILITIES },
        jsonSchemaValidator,
        // Tasks are the caller's transcription jobs (tasks.ts); tasks/result waits polling this often.
        taskStore: jobTaskStore(ctx, log),
        defaultTaskPollInterval: TASK_POLL_INTERVAL_MS,
      },
    );
    const tools = callableTools(ctx, publicUrl);
    for (const tool of TOOLS) {
      // tools/list is McpServer's, from these registrations; tools/call is tool-calls.ts's.
      const registered = server.registerTool(tool.name, tool.config, () => {
        throw new Error('tools/call is handled by tool-calls.ts');
      });
      // tools/list shows which tools a client may call as a task (the SDK's registerTool says forbidden).
      if (tool.submitTask) registered.execution = { taskSupport: 'optional' };
    }
    handleToolCalls(server, tools, log, req.get('mcp-protocol-version') ?? UNDECLARED_REVISION);
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
}
