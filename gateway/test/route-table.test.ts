/**
 * One route table (src/routes.ts) for REST routing and the OpenAPI document: each reads it, so a
 * route cannot be served and not described, or described and not served, and the query
 * parameters REST accepts are the ones the document lists. The MCP tools name their operations
 * there too.
 */
import { MAX_CURSOR_CHARS } from '@murmur/contract';
import { createLogger, type ServiceClients } from '@murmur/kit';
import { MemoryIdempotencyStore } from '../src/idempotency/store';
import { TOOLS } from '../src/mcp/tools';
import { buildOpenApiDocument } from '../src/openapi/document';
import { apiRouter } from '../src/rest/routes';
import { expressPath, MCP_TOOL_OPERATIONS, ROUTES } from '../src/routes';

const doc = buildOpenApiDocument('test');
const table = ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path} ${r.operationId}`).sort();

describe('the route table', () => {
  it('is what the OpenAPI document describes: every operation, and no other', () => {
    const described = Object.entries(doc.paths)
      .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId}`))
      .sort();
    expect(described).toEqual(table);
    expect(table.length).toBeGreaterThanOrEqual(17);
  });

  it('is what REST mounts: every route, and no other', () => {
    const router = apiRouter({} as ServiceClients, new MemoryIdempotencyStore(), createLogger('test', 'silent'), undefined, { version: 'test' });
    const mounted = (router.stack as Array<{ route?: { path: string; methods: Record<string, boolean> } }>)
      .flatMap((layer) => (layer.route ? Object.keys(layer.route.methods).filter((m) => m !== '_all').map((m) => `${m.toUpperCase()} ${layer.route!.path}`) : []))
      .sort();
    expect(mounted).toEqual(ROUTES.map((r) => `${r.method.toUpperCase()} ${expressPath(r.path)}`).sort());
  });

  it('lists, per operation, exactly the query parameters REST accepts, with their types', () => {
    const parameters = doc.components.parameters as Record<string, { in: string; schema: { type: string; maxLength?: number } }>;
    for (const route of ROUTES) {
      const op = doc.paths[route.path]![route.method]!;
      const documented = (op.parameters ?? [])
        .map((p) => (typeof p.$ref === 'string' ? p.$ref.replace('#/components/parameters/', '') : undefined))
        .filter((name): name is string => name !== undefined && parameters[name]?.in === 'query');
      const rules: Record<string, string> = 'query' in route ? route.query : {};
      expect([route.operationId, documented]).toEqual([route.operationId, Object.keys(rules)]);
      for (const [name, kind] of Object.entries(rules)) {
        const schema = parameters[name]!.schema;
        expect([route.operationId, name, schema.type]).toEqual([route.operationId, name, kind === 'int' ? 'integer' : 'string']);
        if (kind === 'cursor') expect(schema.maxLength).toBe(MAX_CURSOR_CHARS);
      }
    }
  });

  it('names the operation of every MCP tool, and every tool is named there', () => {
    expect(TOOLS.map((t) => t.name).sort()).toEqual(Object.keys(MCP_TOOL_OPERATIONS).sort());
    const operations = new Set<string>(ROUTES.map((r) => r.operationId));
    for (const operation of Object.values(MCP_TOOL_OPERATIONS)) expect(operations.has(operation)).toBe(true);
  });
});
