/** The contract's gRPC status numbers are grpc-js's: the error table maps to real statuses. */
import { status } from '@grpc/grpc-js';
import { ERROR_CODES, GRPC_STATUS } from '@murmur/contract';

describe('GRPC_STATUS', () => {
  it('names every status of @grpc/grpc-js with its number', () => {
    const grpcJs = Object.fromEntries(Object.entries(status).filter(([name]) => Number.isNaN(Number(name))));
    expect(GRPC_STATUS).toEqual(grpcJs);
  });

  it('maps every public error code to one of them', () => {
    const known = new Set<number>(Object.values(GRPC_STATUS));
    for (const spec of Object.values(ERROR_CODES)) expect(known.has(spec.grpc)).toBe(true);
  });
});
