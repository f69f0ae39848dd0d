/** Operations: one function per capability, shared by the REST and MCP front ends. */
export * from './authenticate';
export * from './context';
export * from './folders';
export * from './paging';
export * from './present';
export * from './profile';
export * from './recordings';
export * from './thought-threads';
export * from './convert';
export * from './schemas';
export * from './transcript-formats';
export * from './transcribe';
export * from './transcriptions';
export * from './shapes';
export * from './admission';
export * from './listen-tokens';
