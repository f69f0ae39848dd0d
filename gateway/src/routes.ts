/**
 * Every route of `/api/v1`, in one table: method, path, operation and query rules. REST routing
 * (rest/routes.ts) mounts exactly these and the OpenAPI document (openapi/document.ts) describes
 * exactly these: each keys its part by `operationId`, typed by this table, so a route cannot
 * exist in one and not the other. The MCP tools name the operation each one runs here too.
 */

/**
 * How REST reads a query parameter (rest/query.ts): `int`, a whole number; `cursor`, a string
 * of at most the contract's cursor length; `string`, any other text; `datetime`, an ISO-8601
 * time or a bare date; `boolean`, `true` or `false`. The OpenAPI document describes each by name (components.parameters).
 */
/** Where the REST API is mounted; the table's paths are under it. */
export const API_BASE = '/api/v1';

export type ParamKind = 'int' | 'string' | 'cursor' | 'datetime' | 'boolean';
export type QuerySpec = Readonly<Record<string, ParamKind>>;

export interface RouteSpec {
  method: 'get' | 'post';
  /** Under `/api/v1`, OpenAPI style: `/recordings/{id}`. */
  path: string;
  operationId: string;
  /**
   * The query parameters the route takes; any other, repeated or mistyped one is a 400. Absent:
   * the route reads no query string (the AI routes, whose input is the body).
   */
  query?: QuerySpec;
  /** `none`: served without an API key (the OpenAPI document). Default: a key is required. */
  auth?: 'none';
}

const PAGE = { limit: 'int', cursor: 'cursor' } as const;
const NONE = {} as const;

export const ROUTES = [
  { method: 'get', path: '/me', operationId: 'getMe', query: NONE },
  { method: 'get', path: '/usage', operationId: 'getUsage', query: NONE },
  {
    method: 'get',
    path: '/recordings',
    operationId: 'listRecordings',
    query: { ...PAGE, q: 'string', folder_id: 'string', created_after: 'datetime', created_before: 'datetime' },
  },
  {
    method: 'get',
    path: '/search',
    operationId: 'searchPassages',
    query: { ...PAGE, q: 'string', type: 'string', folder_id: 'string', recording_id: 'string', created_after: 'datetime', created_before: 'datetime' },
  },
  { method: 'get', path: '/recordings/{id}', operationId: 'getRecording', query: { words: 'boolean', response_format: 'string' } },
  { method: 'post', path: '/recordings/{id}/speakers', operationId: 'setSpeakerNames', query: NONE },
  { method: 'get', path: '/thought-threads', operationId: 'listThoughtThreads', query: PAGE },
  { method: 'get', path: '/thought-threads/{id}', operationId: 'getThoughtThread', query: NONE },
  { method: 'get', path: '/folders', operationId: 'listFolders', query: PAGE },
  { method: 'get', path: '/knowledge-bases', operationId: 'listKnowledgeBases', query: PAGE },
  { method: 'post', path: '/convert', operationId: 'convert' },
  { method: 'post', path: '/ask', operationId: 'ask' },
  { method: 'post', path: '/transcribe', operationId: 'transcribe' },
  { method: 'post', path: '/transcriptions', operationId: 'createTranscription' },
  { method: 'get', path: '/transcriptions', operationId: 'listTranscriptions', query: { ...PAGE, status: 'string' } },
  { method: 'get', path: '/transcriptions/{id}', operationId: 'getTranscription', query: { response_format: 'string', words: 'boolean' } },
  { method: 'get', path: '/transcriptions/{id}/events', operationId: 'streamTranscriptionEvents', query: NONE },
  { method: 'post', path: '/transcriptions/{id}/cancel', operationId: 'cancelTranscription', query: NONE },
  { method: 'post', path: '/transcriptions/{id}/webhook/retry', operationId: 'retryTranscriptionWebhook', query: NONE },
  { method: 'post', path: '/listen/tokens', operationId: 'createListenToken', query: NONE },
  {
    method: 'get',
    path: '/requests',
    operationId: 'listRequests',
    query: { ...PAGE, status_code: 'string', route: 'string', tool: 'string', key_id: 'string', created_after: 'datetime', created_before: 'datetime' },
  },
  { method: 'get', path: '/asyncapi.json', operationId: 'getAsyncApiDocument', query: NONE, auth: 'none' },
  { method: 'get', path: '/openapi.json', operationId: 'getOpenApiDocument', query: NONE, auth: 'none' },
] as const satisfies readonly RouteSpec[];

export type Route = (typeof ROUTES)[number];
export type OperationId = Route['operationId'];
/** The route of one operation, with its literal query rules. */
export type RouteOf<Id extends OperationId> = Extract<Route, { operationId: Id }>;

/** Express's form of a table path: `/recordings/{id}` → `/recordings/:id`. */
export function expressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * The MCP tools (mcp/tools.ts) and the operation each runs, as its REST route does (DESIGN.md
 * §4: same validation, data, credits and errors). No tool creates or revokes keys, and none
 * reads the profile or knowledge bases.
 */
export const MCP_TOOL_OPERATIONS = {
  list_recordings: 'listRecordings',
  get_recording: 'getRecording',
  list_thought_threads: 'listThoughtThreads',
  get_thought_thread: 'getThoughtThread',
  list_folders: 'listFolders',
  get_usage: 'getUsage',
  search: 'searchPassages',
  transcribe: 'transcribe',
  convert: 'convert',
  ask: 'ask',
} as const satisfies Record<string, OperationId>;

export type McpToolName = keyof typeof MCP_TOOL_OPERATIONS;
