/**
 * The tools/call handler of every request's server. McpServer's own handler renders its
 * failures (an unknown tool, arguments the schema refuses, a bug) as bare text and has no hook
 * to change that, so the call is handled here, through the SDK's public
 * `Server.setRequestHandler`; tools/list stays McpServer's, from the same registrations. Every
 * failure is the contract's error as an isError result, and a bug is logged once, with its stack
 * and the request id, by kit's `asPublicError`.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { getParseErrorMessage } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { CallToolRequestSchema, ErrorCode, McpError, type CreateTaskResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { MurmurError } from '@murmur/contract';
import { asPublicError, type Logger } from '@murmur/kit';
import type { OperationContext, presentJob } from '../operations';
import type { AudioCollector } from './audio-argument';
import { taskCreationError, taskOf } from './tasks';
import { toolError, toolSuccess, type ResourceLink, type ToolResult } from './tool-result';
import { recordToolCall, UNKNOWN_TOOL } from './tool-metrics';
import { knowsStructuredContent } from './text-copy';

/** What the front end learnt of a call while it read the call's body (handler.ts). */
export interface ReceivedCall {
  /** A large body's call was admitted by billing before the body was read on: its charge uses this admission (one rate-limit slot, not two). */
  admissionId?: string;
  /** `audio_base64`, decoded as the body arrived; the message holds a stand-in string instead. */
  audio?: AudioCollector;
}

/** The operations' context of one /mcp request, with what its body told. */
export interface McpContext extends OperationContext {
  received?: ReceivedCall;
}

/** What a running call may use besides its arguments. */
export interface ToolCall {
  /** Aborted when the client cancels the request (notifications/cancelled) or goes away. */
  signal: AbortSignal;
  /** Sends notifications/progress, when the client passed a progressToken (else undefined). */
  progress?: (progress: number, total: number, message: string) => Promise<void>;
  /** The client's protocol revision knows structuredContent (text-copy.ts): a list page's text may then be its summary. */
  structuredContentKnown?: boolean;
}

/** A tool as tools/call runs it: its schemas (also what tools/list shows) and its body. */
export interface CallableTool {
  name: string;
  inputSchema: z.ZodObject;
  outputSchema: z.ZodObject;
  /** Runs the tool on arguments its input schema accepted; resolves to its structured result. */
  run(args: unknown, call: ToolCall): Promise<object>;
  /** Resource links of what the result names (recordings), after its text. */
  links?(value: object): ResourceLink[];
  /** A list tool's text for clients that read structuredContent (text-copy.ts); others get the JSON. */
  pageText?(value: object): string;
  /** A tool that may run as an MCP task: starts its job on accepted arguments (tasks.ts). */
  submitTask?(args: unknown, call: ToolCall): Promise<ReturnType<typeof presentJob>>;
}

/** Validates, runs and renders one call, counted in the tool metrics; never throws. */
export async function callTool(tool: CallableTool | undefined, name: string, args: unknown, log: Logger, call: ToolCall = { signal: new AbortController().signal }): Promise<ToolResult> {
  const start = performance.now();
  const result = await runTool(tool, name, args, log, call);
  recordToolCall(tool ? tool.name : UNKNOWN_TOOL, result, start);
  return result;
}

async function runTool(tool: CallableTool | undefined, name: string, args: unknown, log: Logger, call: ToolCall): Promise<ToolResult> {
  if (!tool) return toolError(new MurmurError('invalid_request', `Tool ${name} not found`));
  const input = await tool.inputSchema.safeParseAsync(args ?? {});
  if (!input.success) {
    return toolError(new MurmurError('invalid_request', `Input validation error: Invalid arguments for tool ${name}: ${getParseErrorMessage(input.error)}`));
  }
  try {
    const value = await tool.run(input.data, call);
    // A result its own schema refuses is our bug, not the caller's.
    const output = tool.outputSchema.safeParse(value);
    if (!output.success) throw new Error(`Output validation error: tool ${name}: ${getParseErrorMessage(output.error)}`);
    const text = call.structuredContentKnown && tool.pageText ? tool.pageText(value) : undefined;
    return toolSuccess(value, tool.links?.(value) ?? [], text);
  } catch (err) {
    return toolError(asPublicError(err, log, { tool: name }));
  }
}

/**
 * A task-augmented call: validates and starts the tool's job, answers its task. A tool that
 * cannot run as a task is -32601 (the 2025-11-25 revision's tool-level negotiation); a failure
 * before the job exists is a JSON-RPC error carrying the contract's error body.
 */
export async function startTask(tool: CallableTool | undefined, name: string, args: unknown, log: Logger, call: ToolCall): Promise<CreateTaskResult> {
  if (!tool) throw taskCreationError(new MurmurError('invalid_request', `Tool ${name} not found`));
  if (!tool.submitTask) throw new McpError(ErrorCode.MethodNotFound, `Tool ${name} does not run as a task (its execution.taskSupport is forbidden); call it without \`task\`.`);
  const input = await tool.inputSchema.safeParseAsync(args ?? {});
  if (!input.success) {
    throw taskCreationError(new MurmurError('invalid_request', `Input validation error: Invalid arguments for tool ${name}: ${getParseErrorMessage(input.error)}`));
  }
  try {
    return { task: taskOf(await tool.submitTask(input.data, call)) };
  } catch (err) {
    throw taskCreationError(asPublicError(err, log, { tool: name }));
  }
}

/**
 * Makes `tools` (already registered on `server` for tools/list) the ones tools/call runs, for a
 * client on `revision` (its MCP-Protocol-Version header, text-copy.ts's default without one).
 */
export function handleToolCalls(server: McpServer, tools: ReadonlyMap<string, CallableTool>, log: Logger, revision: string): void {
  const structuredContentKnown = knowsStructuredContent(revision);
  server.server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    const token = request.params._meta?.progressToken;
    const call: ToolCall = {
      signal: extra.signal,
      structuredContentKnown,
      ...(token !== undefined
        ? {
            progress: (progress: number, total: number, message: string) =>
              extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total, message } }),
          }
        : {}),
    };
    const { name, arguments: args, task } = request.params;
    if (task) return startTask(tools.get(name), name, args, log, call);
    return callTool(tools.get(name), name, args, log, call);
  });
}
