/**
 * Typed promise clients over the ts-proto grpc-js clients: every call gets a deadline, the
 * current request id (and any extra metadata, e.g. the caller's authorization) in metadata,
 * the calling workload's credentials (access/tokens.ts), and failures come back as MurmurError
 * through the one error model.
 */
import * as grpc from '@grpc/grpc-js';
import { currentContext } from './context';
import { MurmurError, type Workload, workloadOfPath } from '@murmur/contract';
import { fromGrpcError } from './errors';
import { PRINCIPAL_ASSERTION_HEADER, WORKLOAD_TOKEN_HEADER, type TokenMinter } from './access/tokens';

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

type ServerStreamOf<F> = F extends (req: infer Q, md?: grpc.Metadata, opts?: Partial<grpc.CallOptions>) => grpc.ClientReadableStream<infer R>
  ? (request: Q, options?: CallOptions) => AsyncIterable<R>
  : never;

/** A bidirectional call: messages go out with `send`, answers come from `messages`. */
export interface DuplexCall<Q, R> {
  /** Sends one message; false when the stream's buffer is full (wait for `drained`). */
  send(message: Q): boolean;
  /** Resolves when a full buffer drained (at once when it is not full). */
  drained(): Promise<void>;
  /** Half-closes: no more messages from this side. */
  end(): void;
  /** Cancels the call (the server sees it cancelled). */
  cancel(): void;
  /** The server's messages; a failure is thrown from the iteration as a MurmurError. */
  messages: AsyncIterable<R>;
}

type BidiStreamOf<F> = F extends (md: grpc.Metadata, opts?: Partial<grpc.CallOptions>) => grpc.ClientDuplexStream<infer Q, infer R> ? (options?: CallOptions) => DuplexCall<Q, R> : never;

/**
 * The promise form of a ts-proto client: unary methods return promises; client-streaming ones a
 * stream plus a promise; server-streaming ones an async iterable of the messages (a failure is
 * thrown from the iteration as a MurmurError; leaving the loop early cancels the call).
 */
export type PromiseClient<C> = {
  [K in keyof C as K extends keyof grpc.Client ? never : C[K] extends (...args: never[]) => unknown ? K : never]:
    // Server-streaming first: its signature also fits the unary pattern (fewer parameters, a call object).
    BidiStreamOf<C[K]> extends never
      ? ServerStreamOf<C[K]> extends never
        ? UnaryOf<C[K]> extends never
          ? ClientStreamOf<C[K]>
          : UnaryOf<C[K]>
        : ServerStreamOf<C[K]>
      : BidiStreamOf<C[K]>;
} & { close(): void };

interface ClientCtor<C> {
  new (address: string, credentials: grpc.ChannelCredentials, options?: Partial<grpc.ClientOptions>): C;
  service: Record<string, { path: string; requestStream: boolean; responseStream: boolean }>;
}

export interface ClientOptions {
  /** Default deadline of each call, in ms. */
  deadlineMs?: number;
  /** Largest response accepted, in bytes (default 16 MiB); e.g. whole transcripts from library. */
  maxReceiveMessageBytes?: number;
  /**
   * The workload this client calls as: each call carries its workload token and, when the
   * workload issues them and the call runs for a verified user (CallContext.principal), a
   * principal assertion. Without it the client sends no credentials of its own (an internal
   * team's client sends its key in `metadata.authorization`).
   */
  identity?: TokenMinter;
}

/**
 * Adds the workload token (and principal assertion) to each call's metadata. Minting is async
 * (a cached token most of the time); grpc-js holds the call's first message until `next`.
 * The principal is read when the call starts, in the caller's context.
 */
function credentialsInterceptor(minter: TokenMinter, audience: Workload): grpc.Interceptor {
  return (options, nextCall) => {
    // A call cancelled while its tokens are being minted never reaches the wire; its caller still
    // hears CANCELLED (grpc-js would otherwise cancel a call it never started, and say nothing).
    let started = false;
    let cancelled = false;
    const underlying = nextCall(options);
    return new grpc.InterceptingCall(underlying, {
      start(metadata, listener, next) {
        const principal = minter.issuesAssertions ? currentContext()?.principal : undefined;
        // Most calls: both tokens already signed, so the call starts now, without a promise.
        const workloadNow = minter.readyWorkloadToken(audience);
        const assertionNow = principal ? minter.readyPrincipalAssertion(audience, principal) : undefined;
        if (workloadNow && (!principal || assertionNow)) {
          metadata.set(WORKLOAD_TOKEN_HEADER, workloadNow);
          if (assertionNow) metadata.set(PRINCIPAL_ASSERTION_HEADER, assertionNow);
          started = true;
          next(metadata, listener);
          return;
        }
        const go = () => {
          if (cancelled) {
            listener.onReceiveStatus?.({ code: grpc.status.CANCELLED, details: 'Cancelled on client', metadata: new grpc.Metadata() });
            return;
          }
          started = true;
          next(metadata, listener);
        };
        Promise.all([minter.workloadToken(audience), principal ? minter.principalAssertion(audience, principal) : undefined]).then(
          ([workload, assertion]) => {
            metadata.set(WORKLOAD_TOKEN_HEADER, workload);
            if (assertion) metadata.set(PRINCIPAL_ASSERTION_HEADER, assertion);
            go();
          },
          // A key that cannot sign was caught at start-up; should one fail anyway, the call goes
          // out without credentials and the service refuses it, visibly.
          go,
        );
      },
      cancel(next) {
        if (started) return next();
        cancelled = true;
        // End the call that never started too: its deadline timer would otherwise keep running
        // (and keep the process alive) for as long as the deadline, hours for a transcription.
        underlying.cancelWithStatus(grpc.status.CANCELLED, 'Cancelled on client');
      },
    });
  };
}

/**
 * What a refusal of this process's own credentials becomes: a bug or a misconfiguration of
 * ours (a missing key, a wrong trust store, a rule that forgot a caller), never the end user's
 * fault, so it is not passed on as their 401/403 — a plain Error, which the boundary logs with
 * its stack and answers internal_error.
 */
function ownCredentialsRefused(err: MurmurError, path: string): Error {
  return new Error(`${path} refused this workload's credentials (${err.code}): ${err.message}`);
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
  const paths = Object.values(Ctor.service).map((d) => d.path);
  const audience = workloadOfPath(paths[0] ?? '');
  if (opts.identity && !audience) throw new Error(`no workload serves ${paths[0] ?? 'this service'}`);
  const raw = new Ctor(address, grpc.credentials.createInsecure(), {
    ...(opts.identity && audience ? { interceptors: [credentialsInterceptor(opts.identity, audience)] } : {}),
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
  const fail = (path: string) => (err: grpc.ServiceError | null): Error => {
    const e = fromGrpcError(err);
    return opts.identity && (e.code === 'invalid_credentials' || e.code === 'permission_denied') ? ownCredentialsRefused(e, path) : e;
  };
  for (const [name, def] of Object.entries(Ctor.service)) {
    const method = (raw as unknown as Record<string, (...args: unknown[]) => grpc.ClientUnaryCall>)[name]!.bind(raw);
    const callOptions = (o?: CallOptions): Partial<grpc.CallOptions> => ({ deadline: Date.now() + (o?.deadlineMs ?? defaultDeadline) });
    if (!def.requestStream && !def.responseStream) {
      out[name] = (request: unknown, o?: CallOptions) =>
        new Promise((resolve, reject) => {
          const call = method(request, metadataFor(o), callOptions(o), (err: grpc.ServiceError | null, res: unknown) =>
            err ? reject(fail(def.path)(err)) : resolve(res),
          );
          o?.signal?.addEventListener('abort', () => call.cancel(), { once: true });
        });
    } else if (def.requestStream && !def.responseStream) {
      out[name] = (o?: CallOptions) => {
        let stream!: grpc.ClientWritableStream<unknown>;
        const response = new Promise((resolve, reject) => {
          stream = method(metadataFor(o), callOptions(o), (err: grpc.ServiceError | null, res: unknown) =>
            err ? reject(fail(def.path)(err)) : resolve(res),
          ) as unknown as grpc.ClientWritableStream<unknown>;
        });
        o?.signal?.addEventListener('abort', () => stream.cancel(), { once: true });
        return { stream, response };
      };
    } else if (def.requestStream && def.responseStream) {
      out[name] = (o?: CallOptions): DuplexCall<unknown, unknown> => {
        const call = (method as unknown as (md: grpc.Metadata, co: Partial<grpc.CallOptions>) => grpc.ClientDuplexStream<unknown, unknown>)(metadataFor(o), callOptions(o));
        // Errors surface through `messages`; without a listener an early one would be thrown.
        call.on('error', () => undefined);
        o?.signal?.addEventListener('abort', () => call.cancel(), { once: true });
        return {
          send: (message) => call.write(message),
          drained: () => (call.writableNeedDrain ? new Promise<void>((resolve) => call.once('drain', () => resolve())) : Promise.resolve()),
          end: () => call.end(),
          cancel: () => call.cancel(),
          messages: {
            async *[Symbol.asyncIterator]() {
              try {
                for await (const message of call) yield message;
              } catch (err) {
                throw fail(def.path)(err as grpc.ServiceError);
              }
            },
          },
        };
      };
    } else if (!def.requestStream && def.responseStream) {
      out[name] = (request: unknown, o?: CallOptions) => ({
        async *[Symbol.asyncIterator]() {
          const call = (method as unknown as (q: unknown, md: grpc.Metadata, co: Partial<grpc.CallOptions>) => grpc.ClientReadableStream<unknown>)(
            request,
            metadataFor(o),
            callOptions(o),
          );
          const cancel = () => call.cancel();
          o?.signal?.addEventListener('abort', cancel, { once: true });
          let ended = false;
          try {
            for await (const message of call) yield message;
            ended = true;
          } catch (err) {
            ended = true;
            if (o?.signal?.aborted) return;
            throw fail(def.path)(err as grpc.ServiceError);
          } finally {
            o?.signal?.removeEventListener('abort', cancel);
            if (!ended) call.cancel();
          }
        },
      });
    }
  }
  return out as PromiseClient<C>;
}
