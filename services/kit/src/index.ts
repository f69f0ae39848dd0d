/** @murmur/kit — the one home of cross-cutting code shared by every service and the gateway. */
export * from './clock';
export * from './config';
export * from './context';
export * from './cursor';
export * from './db';
export * from './embedded-postgres';
export * from './errors';
export * from './grpc-client';
export * from './grpc-server';
export * from './ids';
export * from './log';
export * from './redis';
export * from './shutdown';
export * from './testing';
export * from './health';
export * from './service-main';
export * from './key-revocations';
