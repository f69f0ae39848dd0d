/**
 * The MCP side of the gateway tests: the SDK's own Client over Streamable HTTP (what Claude,
 * Cursor and the Inspector use) — the v1 line for the 2025-11-25 revision (initialize, tasks),
 * the v2 line pinned to 2026-07-28 (server/discover, the per-request envelope) — a tool call read
 * back as the contract's success or error body, and an independent check of structuredContent
 * against the output schema the server lists (ajv, not the SDK's validator, so a schema the
 * SDK's validator misreads still fails here).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as CurrentClient, StreamableHTTPClientTransport as CurrentTransport } from '@modelcontextprotocol/client';

export type Structured = Record<string, any>;

/** Where an isError result carries the contract's error body (gateway/src/mcp/tool-result.ts). */
const ERROR_META_KEY = 'dev.murmur/error';

/** The protocol revisions the server answers, each through its own SDK line's client. */
export const MCP_REVISIONS = ['2025-11-25', '2026-07-28'] as const;
export type McpRevision = (typeof MCP_REVISIONS)[number];

/** What the tests use of a client, the same whichever SDK line speaks. */
export interface McpClient {
  listTools(): Promise<{ tools: Array<{ name: string; title?: string; description?: string; inputSchema: Structured; outputSchema?: Structured; annotations?: Structured }> } & Structured>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: { onprogress?: (progress: { progress: number; total?: number; message?: string }) => void; timeout?: number; resetTimeoutOnProgress?: boolean },
  ): Promise<Structured>;
  /** The revision the connection speaks (the v2 line says; the v1 line always speaks 2025-11-25). */
  getNegotiatedProtocolVersion?(): string | undefined;
  close(): Promise<void>;
}

/** A connected SDK Client acting with `key` (the v1 line: 2025-11-25). */
export async function connectMcp(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'murmur-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** A connected client of the SDK line that speaks `revision`, acting with `key`. */
export async function connectMcpAt(revision: McpRevision, baseUrl: string, key: string): Promise<McpClient> {
  if (revision === '2025-11-25') return connectMcp(baseUrl, key);
  const client = new CurrentClient({ name: 'murmur-test', version: '1.0.0' }, { versionNegotiation: { mode: { pin: revision } } });
  await client.connect(new CurrentTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return {
    listTools: () => client.listTools(),
    callTool: (params, _schema, options) => client.callTool(params, options),
    getNegotiatedProtocolVersion: () => client.getNegotiatedProtocolVersion(),
    close: () => client.close(),
  };
}

export interface ToolCallResult {
  isError: boolean;
  /** structuredContent on success; the contract's error body (`{error: {...}}`) on an isError result. */
  data: Structured;
  /** The result's text content. */
  text: string;
}

/** Calls a tool; an error result must carry the same contract body as text and in `_meta`. */
export async function callTool(client: McpClient, name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content as Array<{ text: string }>)[0]?.text ?? '';
  if (res.isError) {
    const body = JSON.parse(text) as Structured;
    expect(body).toEqual((res._meta as Structured)[ERROR_META_KEY]);
    return { isError: true, data: body, text };
  }
  return { isError: false, data: res.structuredContent as Structured, text };
}

/** Validators of every tool's listed output schema, by tool name. */
export async function outputValidators(client: McpClient): Promise<Map<string, ValidateFunction>> {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const { tools } = await client.listTools();
  const out = new Map<string, ValidateFunction>();
  for (const tool of tools) {
    if (!tool.outputSchema) continue;
    const { $schema: _dialect, ...schema } = tool.outputSchema as Structured;
    out.set(tool.name, ajv.compile(schema));
  }
  return out;
}

/** Fails with ajv's errors when `value` does not match the tool's output schema. */
export function expectValidOutput(validators: Map<string, ValidateFunction>, tool: string, value: unknown): void {
  const validate = validators.get(tool);
  if (!validate) throw new Error(`tool ${tool} lists no output schema`);
  const ok = validate(value);
  expect(ok ? [] : validate.errors).toEqual([]);
}
