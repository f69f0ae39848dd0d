/**
 * @murmur/contract — every public rule of Murmur, defined once and with no I/O: the error table,
 * limits, text and language rules, header rules, OAuth rules, ids, job statuses and their JSON,
 * and who may call each RPC. Services, the gateway and the app import it; the OpenAPI document
 * and the MCP schemas take their numbers and patterns from it. The runtime that enforces or
 * carries these rules (gRPC, databases, Redis, tracing) is `@murmur/kit`.
 */
export * from './grpc-status';
export * from './errors';
export * from './limits';
export * from './text-rules';
export * from './headers';
export * from './oauth-rules';
export * from './ids';
export * from './job-json';
export * from './workloads';
export * from './rpc-policy';
export * from './timeline';
export * from './timeline-rules';
export * from './timeline-wire';
export * from './timeline-json';
export * from './redaction-rules';
export * from './live-rules';
export * from './search-rules';
export * from './request-log-rules';
