/** @murmur/launcher — the supervisor behind `npm start`, reused by the benchmarks to run the real topology. */
export * from './backoff';
export * from './child-identity';
export * from './supervisor';
