/**
 * The MCP side of the gateway tests: the SDK's own Client over Streamable HTTP (what Claude,
 * Cursor and the Inspector use), a tool call read back as the contract's success or error body,
 * and an independent check of structuredContent against the output schema the server lists
 * (ajv, not the SDK's validator, so a schema the SDK's validator misreads still fails here).
 */
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export type Structured = Record<string, any>;

/** Where an isError result carries the contract's error body (gateway/src/mcp/tool-result.ts). */
const ERROR_META_KEY = 'dev.murmur/error';

/** A connected SDK Client acting with `key`. */
export async function connectMcp(baseUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'murmur-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

export interface ToolCallResult {
  isError: boolean;
  /** structuredContent on success; the contract's error body (`{error: {...}}`) on an isError result. */
  data: Structured;
  /** The result's text content. */
  text: string;
}

/** Calls a tool; an error result must carry the same contract body as text and in `_meta`. */
export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
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
export async function outputValidators(client: Client): Promise<Map<string, ValidateFunction>> {
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
