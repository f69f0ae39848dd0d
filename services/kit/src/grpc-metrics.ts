/**
 * Every gRPC server's calls as metrics (decision 0041): a server interceptor (grpc-server.ts
 * installs it on every service) counting each call by method, gRPC status and the contract's
 * error code (the ErrorInfo reason), and timing it from arrival to status. Labels are the
 * method's service and name — only methods the server registered reach an interceptor (grpc-js
 * answers unknown paths itself) — the status name and a contract code: closed sets.
 */
import * as grpc from '@grpc/grpc-js';
import { isErrorCode } from '@murmur/contract';
import { errorInfoOf } from './errors';
import { defineCounter, defineHistogram, LabelledChildren, NO_ERROR, secondsSince } from './metrics';

const handled = defineCounter(
  'murmur_grpc_server_handled_total',
  'gRPC calls this server finished, by method, status and contract error code (ErrorInfo reason; empty on success).',
  ['grpc_service', 'grpc_method', 'grpc_code', 'error_code'],
);
const handling = defineHistogram('murmur_grpc_server_handling_seconds', 'Seconds from a gRPC call arriving to its status being sent, by method.', ['grpc_service', 'grpc_method']);

/** `/murmur.billing.v1.BillingService/Reserve` → [`murmur.billing.v1.BillingService`, `Reserve`]. */
function split(path: string): [string, string] {
  const [, service = '', method = ''] = path.split('/');
  return [service, method];
}

const CODE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(grpc.status)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [v as number, k]),
);

const handledChildren = new LabelledChildren(3, ([path = '', code = '', reason = '']) => handled.labels(...split(path), CODE_NAMES[Number(code)] ?? 'UNKNOWN', reason));
const handlingChildren = new LabelledChildren(1, ([path = '']) => handling.labels(...split(path)));

/** The contract code a failed status carries, or NO_ERROR (a success, or a status without one). */
function errorCodeOf(status: Pick<grpc.StatusObject, 'code'> & { metadata?: grpc.Metadata | null }): string {
  if (status.code === grpc.status.OK || !status.metadata) return NO_ERROR;
  const reason = errorInfoOf({ metadata: status.metadata })?.reason;
  return reason && isErrorCode(reason) ? reason : NO_ERROR;
}

/** The interceptor: one count and one observation per call, when its status goes out (or it is cancelled). */
export const grpcMetricsInterceptor: grpc.ServerInterceptor = (descriptor, call) => {
  const start = performance.now();
  const path = descriptor.path;
  let done = false;
  const finish = (code: number, errorCode: string) => {
    if (done) return;
    done = true;
    handledChildren.get(path, code, errorCode).inc();
    handlingChildren.get(path).observe(secondsSince(start));
  };
  return new grpc.ServerInterceptingCall(call, {
    start: (next) => next({ onCancel: () => finish(grpc.status.CANCELLED, NO_ERROR) }),
    sendStatus: (status, next) => {
      finish(status.code, errorCodeOf(status));
      next(status);
    },
  });
};
