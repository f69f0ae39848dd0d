/**
 * The gRPC server factory every service uses: async handlers (`(request, ctx) => response`),
 * one error path (MurmurError → status + ErrorInfo; anything else logged and sent as INTERNAL
 * "internal error"), the request id from metadata in every log line, gRPC health checking,
 * server reflection, every call's metrics (grpc-metrics.ts), and graceful shutdown.
 */
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { protoRoot } from '@murmur/proto';
import { acceptRequestId, runWithContext } from './context';
import { BindError } from './bind-error';
import { grpcMetricsInterceptor } from './grpc-metrics';
import { asPublicError, toGrpcError } from './errors';
import type { Logger } from './log';
import { bindOwner, decide, identifyCaller, type AccessControl, type Caller } from './access/access-control';
import { ruleFor, type RpcRule } from '@murmur/contract';

/** What a handler gets besides the request. */
export interface HandlerContext {
  metadata: grpc.Metadata;
  requestId: string;
  /** Aborted when the client cancels or the deadline passes. */
  signal: AbortSignal;
  /** Who called, as the access check established it (handlers never read credentials). */
  caller: Caller;
}

type MethodDef = {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  requestDeserialize: (b: Buffer) => unknown;
  responseSerialize: (v: never) => Buffer;
};

type Req<M> = M extends { requestDeserialize: (b: Buffer) => infer R } ? R : never;
type Res<M> = M extends { responseSerialize: (v: infer R) => Buffer } ? R : never;

export type UnaryHandler<Q, R> = (request: Q, ctx: HandlerContext) => Promise<R>;
export type ClientStreamHandler<Q, R> = (requests: AsyncIterable<Q>, ctx: HandlerContext) => Promise<R>;
/** A server-streaming handler yields its messages; a throw ends the call with that error. */
export type ServerStreamHandler<Q, R> = (request: Q, ctx: HandlerContext) => AsyncIterable<R>;

/**
 * A bidirectional handler reads the client's messages as they come and yields its own; a throw
 * ends the call with that error. Leaving `requests` unread does not stop the answers.
 */
export type BidiStreamHandler<Q, R> = (requests: AsyncIterable<Q>, ctx: HandlerContext) => AsyncIterable<R>;

/** The handler type of every method of a ts-proto service definition. */
export type ServiceHandlers<D> = {
  [K in keyof D]: D[K] extends { requestStream: true; responseStream: false }
    ? ClientStreamHandler<Req<D[K]>, Res<D[K]>>
    : D[K] extends { requestStream: false; responseStream: false }
      ? UnaryHandler<Req<D[K]>, Res<D[K]>>
      : D[K] extends { requestStream: false; responseStream: true }
        ? ServerStreamHandler<Req<D[K]>, Res<D[K]>>
        : BidiStreamHandler<Req<D[K]>, Res<D[K]>>;
};

export interface BoundService {
  definition: Record<string, MethodDef>;
  handlers: Record<string, (request: never, ctx: HandlerContext) => Promise<unknown> | AsyncIterable<unknown>>;
}

/**
 * Pairs a ts-proto definition with its handlers, type-checked. Methods left out answer
 * UNIMPLEMENTED (RPCs a later release implements).
 */
export function bindService<D extends Record<string, MethodDef>>(definition: D, handlers: Partial<ServiceHandlers<D>>): BoundService {
  return { definition, handlers: handlers as BoundService['handlers'] };
}

export interface GrpcServerOptions {
  /** Service name for logs, e.g. "auth". */
  name: string;
  log: Logger;
  services: BoundService[];
  /** .proto files (relative to proto/) served by reflection, e.g. "murmur/auth/v1/auth.proto". */
  protoFiles: string[];
  /**
   * Largest request accepted, in bytes (default 8 MiB). Raise it only for services whose
   * requests legitimately carry large payloads (e.g. library: whole transcripts).
   */
  maxReceiveMessageBytes?: number;
  /** How this server knows its callers; every call is checked against the policy before its handler. */
  access: AccessControl;
  /**
   * The rules to enforce; the one policy table (access/rpc-policy.ts) unless a test of the
   * server factory itself serves methods of its own.
   */
  rules?: (path: string) => RpcRule | undefined;
}

export interface RunningGrpcServer {
  server: grpc.Server;
  port: number;
  health: HealthImplementation;
  /** Stops taking calls, lets running ones finish up to `graceMs`, then cancels the rest. */
  shutdown(graceMs?: number): Promise<void>;
}

function serviceNameOf(def: Record<string, MethodDef>): string {
  const first = Object.values(def)[0];
  if (!first) throw new Error('empty service definition');
  return first.path.split('/')[1] ?? '';
}

/** What a failed handler answers: its MurmurError, or the one public form of anything else. */
function toServiceError(err: unknown, log: Logger, method: string): Partial<grpc.ServiceError> {
  return toGrpcError(asPublicError(err, log, { method }, 'internal error'));
}

/** The reason of every cancelled call's signal: one object, not a DOMException with a stack per call. */
const CANCELLED = new Error('the call was cancelled by the client or its deadline passed');

/**
 * The handler's view of a call. Its signal is made when first read: most unary handlers never
 * read it, and each one made up front was an AbortController, a 'cancelled' listener and (through
 * OpenTelemetry's patched emitter) a context-bound wrapper and a WeakMap on every call. A call
 * cancelled before that first read answers with a signal already aborted (grpc-js sets
 * `cancelled` before it emits the event).
 */
function callContext(
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerReadableStream<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown> | grpc.ServerDuplexStream<unknown, unknown>,
): HandlerContext {
  const header = call.metadata.get('x-request-id')[0];
  let controller: AbortController | undefined;
  return {
    metadata: call.metadata,
    requestId: acceptRequestId(typeof header === 'string' ? header : undefined),
    get signal() {
      if (!controller) {
        const made = new AbortController();
        controller = made;
        if (call.cancelled) made.abort(CANCELLED);
        else (call as grpc.ServerUnaryCall<unknown, unknown>).on('cancelled', () => made.abort(CANCELLED));
      }
      return controller.signal;
    },
    caller: {},
  };
}

/**
 * The client stream with its first message's owner bound as the handler reads it: nothing is read
 * ahead, so the handler's own idle limits still govern a client that sends nothing. A foreign
 * owner is thrown from that first read. Returning early does not destroy the call's stream (the
 * handler may still answer on it).
 */
function bindingFirstMessage(source: AsyncIterable<unknown>, bind: (message: unknown) => void): AsyncIterable<unknown> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      let first = true;
      return {
        async next() {
          const next = await it.next();
          if (first) {
            first = false;
            if (!next.done) bind(next.value);
          }
          return next;
        },
        async return(value?: unknown) {
          return { done: true as const, value };
        },
      };
    },
  };
}

function adapt(bound: BoundService, name: string, def: MethodDef, log: Logger, access: AccessControl, rule: RpcRule | undefined): grpc.UntypedHandleCall {
  const handler = bound.handlers[name];
  const unimplemented = (cb: grpc.sendUnaryData<unknown>) =>
    cb({ code: grpc.status.UNIMPLEMENTED, details: `${def.path} is not implemented in this release` });
  /** The access check: who calls, may they; the owner the call is bound to, if any. */
  const admit = async (ctx: HandlerContext): Promise<string | undefined> => {
    const admission = decide(def.path, rule, rule?.anyone ? {} : await identifyCaller(access, ctx.metadata));
    ctx.caller = admission.caller;
    return admission.boundUser;
  };
  const owner = rule?.user?.owner ?? null;
  if (def.requestStream && !def.responseStream) {
    return (call: grpc.ServerReadableStream<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const ctx = callContext(call);
      runWithContext({ requestId: ctx.requestId }, () => {
        admit(ctx)
          .then(async (boundUser) => {
            if (!handler) return unimplemented(callback);
            const source = boundUser && owner ? bindingFirstMessage(call, (m) => bindOwner(m, owner, boundUser)) : call;
            callback(null, await (handler as unknown as ClientStreamHandler<unknown, unknown>)(source, ctx));
          })
          .catch((err: unknown) => callback(toServiceError(err, log, def.path)));
      });
    };
  }
  if (!def.requestStream && !def.responseStream) {
    return (call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const ctx = callContext(call);
      runWithContext({ requestId: ctx.requestId }, () => {
        admit(ctx)
          .then(async (boundUser) => {
            if (!handler) return unimplemented(callback);
            if (boundUser && owner) bindOwner(call.request, owner, boundUser);
            callback(null, await (handler as unknown as UnaryHandler<unknown, unknown>)(call.request, ctx));
          })
          .catch((err: unknown) => callback(toServiceError(err, log, def.path)));
      });
    };
  }
  if (!def.requestStream && def.responseStream) {
    return (call: grpc.ServerWritableStream<unknown, unknown>) => {
      const ctx = callContext(call);
      runWithContext({ requestId: ctx.requestId }, () => {
        admit(ctx)
          .then(async (boundUser) => {
            if (!handler) return call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: `${def.path} is not implemented in this release` });
            if (boundUser && owner) bindOwner(call.request, owner, boundUser);
            for await (const message of (handler as unknown as ServerStreamHandler<unknown, unknown>)(call.request, ctx)) {
              if (ctx.signal.aborted) break;
              // Backpressure: a slow reader pauses the handler, it does not grow a queue here.
              if (!call.write(message)) await once(call, 'drain', { signal: ctx.signal }).catch(() => undefined);
            }
            if (!ctx.signal.aborted) call.end();
          })
          .catch((err: unknown) => {
            if (!ctx.signal.aborted) call.emit('error', toServiceError(err, log, def.path));
          });
      });
    };
  }
  return (call: grpc.ServerDuplexStream<unknown, unknown>) => {
    const ctx = callContext(call);
    runWithContext({ requestId: ctx.requestId }, () => {
      admit(ctx)
        .then(async (boundUser) => {
          if (!handler) return call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: `${def.path} is not implemented in this release` });
          const source = boundUser && owner ? bindingFirstMessage(call, (m) => bindOwner(m, owner, boundUser)) : call;
          for await (const message of (handler as unknown as BidiStreamHandler<unknown, unknown>)(source, ctx)) {
            if (ctx.signal.aborted) break;
            if (!call.write(message)) await once(call, 'drain', { signal: ctx.signal }).catch(() => undefined);
          }
          if (!ctx.signal.aborted) call.end();
        })
        .catch((err: unknown) => {
          if (!ctx.signal.aborted) call.emit('error', toServiceError(err, log, def.path));
        });
    });
  };
}

/** Builds, binds and starts a server on `address` ("host:port"; port 0 picks a free one). */
export async function startGrpcServer(opts: GrpcServerOptions, address: string): Promise<RunningGrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': opts.maxReceiveMessageBytes ?? 8 * 1024 * 1024,
    'grpc.keepalive_permit_without_calls': 1,
    // Every call counted and timed by method, status and error code (grpc-metrics.ts).
    interceptors: [grpcMetricsInterceptor],
  });
  const statusMap: Record<string, 'SERVING'> = { '': 'SERVING' };
  for (const bound of opts.services) {
    const impl: grpc.UntypedServiceImplementation = {};
    for (const [name, def] of Object.entries(bound.definition)) {
      const rule = (opts.rules ?? ruleFor)(def.path);
      // A method without a rule would be refused on every call: a build error, not a runtime surprise.
      if (!rule) throw new Error(`${def.path} has no access rule (services/contract/src/rpc-policy.ts)`);
      impl[name] = adapt(bound, name, def, opts.log, opts.access, rule);
    }
    server.addService(bound.definition as unknown as grpc.ServiceDefinition, impl);
    statusMap[serviceNameOf(bound.definition)] = 'SERVING';
  }
  const health = new HealthImplementation(statusMap);
  health.addToServer(server);
  // Reflection describes our services and the health service, so grpcurl sees everything served.
  const pkg = {
    ...protoLoader.loadSync(opts.protoFiles, { includeDirs: [protoRoot], keepCase: true }),
    ...protoLoader.loadSync(healthProtoPath, { keepCase: true }),
  };
  new ReflectionService(pkg).addToServer(server);

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(new BindError(address, err)) : resolve(p))),
  );
  opts.log.info({ address, port }, `${opts.name} gRPC server listening`);

  return {
    server,
    port,
    health,
    async shutdown(graceMs = 10_000) {
      for (const name of Object.keys(statusMap)) health.setStatus(name, 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
