/** The OpenAPI document's types, as deep as its builders and consumers need. */
import type { JsonSchema } from './schemas';

export type Json = Record<string, unknown>;

/** The document, typed only as deep as its consumers need. */
export interface OpenApiDocument {
  openapi: string;
  info: Json;
  servers: Json[];
  tags: Json[];
  security: Json[];
  paths: Record<string, Record<string, OperationObject>>;
  components: {
    schemas: Record<string, JsonSchema>;
    parameters: Record<string, Json>;
    headers: Record<string, Json>;
    securitySchemes: Record<string, Json>;
  };
}

/** An Operation Object, as far as the checker and the tests read it. */
export interface OperationObject {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security?: Json[];
  parameters?: Json[];
  requestBody?: Json;
  responses: Record<string, ResponseObject>;
}

/** A Response Object: headers by name, bodies by media type. */
export interface ResponseObject {
  description: string;
  headers?: Record<string, Json>;
  content?: Record<string, { schema: JsonSchema; example?: unknown; examples?: Record<string, Json> }>;
}

/** Where the API is mounted (routes.ts); paths in the document are relative to it. */
export { API_BASE } from '../routes';
