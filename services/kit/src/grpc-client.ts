/**
 * Typed promise clients over the ts-proto grpc-js clients: every call gets a deadline, the
 * current request id (and any extra metadata, e.g. the caller's authorization) in metadata,
 * and failures come back as MurmurError through the one error model.
 */
import * as grpc from '@grpc/grpc-js';
import { currentContext } from './context';
import { fromGrpcError } from './errors';

type Callback<R> = (err: grpc.ServiceError | null, res: R) => void;

/** Per-call options. */
export interface CallOptions {
  deadlineMs?: number;
  metadata?: Record<string, string>;
  signal?: AbortSignal;
}

type UnaryOf<F> = F extends (req: infer Q, md: grpc.Metadata, opts: Partial<grpc.CallOptions>, cb: Callback<infer R>) => grpc.ClientUnaryCall
  ? (request: Q, options?: CallOptions) => Promise<R>
  : never;
type ClientStreamOf<F> = F extends (md: grpc.Metadata, opts: Partial<grpc.CallOptions>, cb: Callback<infer R>) => grpc.ClientWritableStream<infer Q>
  ? (options?: CallOptions) => { stream: grpc.ClientWritableStream<Q>; response: Promise<R> }
  : never;

/** The promise form of a ts-proto client: unary methods return promises; client-streaming ones a stream plus a promise. */
export type PromiseClient<C> = {
  [K in keyof C as K extends keyof grpc.Client ? never : C[K] extends (...args: never[]) => unknown ? K : never]:
    UnaryOf<C[K]> extends never ? ClientStreamOf<C[K]> : UnaryOf<C[K]>;
} & { close(): void };

interface ClientCtor<C> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ClientOptions>): C;
  service: Record<string, { requestStream: boolean; responseStream: boolean }>;
}

export interface ClientOptions {
  /** Default deadline of each call, in ms. */
  deadlineMs?: number;
  /** Largest response accepted, in bytes (default 16 MiB); e.g. whole transcripts from library. */
  maxReceiveMessageBytes?: number;
}

function metadataFor(options: CallOptions | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  const ctx = currentContext();
  if (ctx) md.set('x-request-id', ctx.requestId);
  for (const [k, v] of Object.entries(options?.metadata ?? {})) md.set(k, v);
  return md;
}

/** Creates a promise client of `Ctor` for `address`. */
export function createClient<C extends grpc.Client>(Ctor: ClientCtor<C>, address: string, opts: ClientOptions = {}): PromiseClient<C> {
  const raw = new Ctor(address, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    // A restarted service is back in a few seconds: reconnect within a second of it, not after
    // grpc-js's default backoff (1 s growing ×1.6 to 120 s), which kept calls failing for 10 s
    // and more after a kill -9 (bench/faults).
    'grpc.initial_reconnect_backoff_ms': 250,
    'grpc.max_reconnect_backoff_ms': 1_000,
    'grpc.max_receive_message_length': opts.maxReceiveMessageBytes ?? 16 * 1024 * 1024,
  });
  const defaultDeadline = opts.deadlineMs ?? 10_000;
  const out: Record<string, unknown> = { close: () => raw.close() };
  for (const [name, def] of Object.entries(Ctor.service)) {
    const method = (raw as unknown as Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>)[name]!.bind(raw);
    const callOptions = (o?: CallOptions): Partial<grpc.CallOptions> => ({ deadline: Date.now() + (o?.deadlineMs ?? defaultDeadline) });
    if (!def.requestStream && !def.responseStream) {
      out[name] = (request: unknown, o?: CallOptions) =>
        new Promise((resolve, reject) => {
          const call = method(request, metadataFor(o), callOptions(o), (err: grpc.ServiceError | null, res: unknown) =>
            err ? reject(fromGrpcError(err)) : resolve(res),
          );
          o?.signal?.addEventListener('abort', () => call.cancel(), { once: true });
        });
    } else if (def.requestStream && !def.responseStream) {
      out[name] = (o?: CallOptions) => {
        let stream!: grpc.ClientWritableStream<unknown>;
        const response = new Promise((resolve, reject) => {
          stream = method(metadataFor(o), callOptions(o), (err: grpc.ServiceError | null, res: unknown) =>
            err ? reject(fromGrpcError(err)) : resolve(res),
          ) as unknown as grpc.ClientWritableStream<unknown>;
        });
        o?.signal?.addEventListener('abort', () => stream.cancel(), { once: true });
        return { stream, response };
      };
    }
  }
  return out as PromiseClient<C>;
}
