/**
 * Generated contracts of the five services (ts-proto for @grpc/grpc-js), one namespace per
 * protobuf package, plus where the .proto sources live (server reflection loads them).
 */
import * as path from 'node:path';

export * as auth from './gen/murmur/auth/v1/auth';
export * as billing from './gen/murmur/billing/v1/billing';
export * as library from './gen/murmur/library/v1/library';
export * as transcription from './gen/murmur/transcription/v1/transcription';
export * as conversion from './gen/murmur/conversion/v1/conversion';
export * as timeline from './gen/murmur/timeline/v1/timeline';
export * as rpcStatus from './gen/google/rpc/status';
export * as rpcErrorDetails from './gen/google/rpc/error_details';
export * as protobufAny from './gen/google/protobuf/any';

/** Folder holding `murmur/<service>/v1/*.proto`, for server reflection. */
export const protoRoot = path.resolve(__dirname, '..');
