/** @murmur/gateway — the HTTP app and the shared operations, for tests and the CLI. */
export * from './app';
export * from './clients';
export * from './http/server';
export * as operations from './operations';
export * as admin from './admin/commands';
export * from './idempotency/store';
export * from './key-cache';
