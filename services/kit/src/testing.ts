/**
 * `@murmur/kit/testing`: every test helper, and nothing that production code may load. Kept out
 * of `@murmur/kit` so no service or gateway process carries test code (kit/test/surface.test.ts
 * holds both sides of that line).
 */
export * from './test-database';
export * from './test-failure';
export * from './test-servers';
export * from './real-servers';
export * from './test-prerequisites';
export * from './manual-clock';
export * from './grpc-calls';
export * from './test-identities';
export * from './test-metrics';
