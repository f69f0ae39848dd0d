/**
 * @murmur/kit — the runtime shared by every service and the gateway (config, log, tracing,
 * gRPC server and clients, Postgres, Redis, access enforcement). The rules it enforces and carries
 * are `@murmur/contract`'s, imported from there. Production code only: test helpers are
 * `@murmur/kit/testing`, and OpenTelemetry's start is `@murmur/kit/tracing` (loaded first by
 * each main.ts, before what it patches).
 */
export * from './clock';
export * from './config';
export * from './context';
export * from './background-work';
export * from './cursor';
export * from './keyset-paging';
export * from './db';
export * from './embedded-postgres';
export * from './errors';
export * from './public-urls';
export * from './grpc-client';
export * from './service-clients';
export * from './bind-error';
export * from './grpc-server';
export * from './host-port';
export * from './metrics';
export * from './metrics-server';
export * from './ids';
export * from './log';
export * from './random';
export * from './redis';
export * from './shutdown';
export * from './health';
export * from './service-main';
export * from './key-revocations';
export * from './hold-lease';
export * from './client-address';
export * from './access/identity-keys';
export * from './access/identity-store';
export * from './access/tokens';
export * from './access/access-control';
export * from './access/workload-identity';
export * from './outbound';
export { clusterTemplateFile, prepareClusterTemplate } from './embedded-cluster-template';
