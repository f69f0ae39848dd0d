import { status } from '@grpc/grpc-js';
import { ERROR_CODES, MurmurError, toErrorBody, type ErrorCode } from '@murmur/contract';
import { fromGrpcError, toGrpcError } from '@murmur/kit';

describe('error model', () => {
  const codes = Object.keys(ERROR_CODES) as ErrorCode[];

  it.each(codes)('round-trips %s through a gRPC status with ErrorInfo', (code) => {
    const original = new MurmurError(code, `message for ${code}`, { param: code === 'invalid_request' ? 'limit' : null, meta: { retry_after: '7' } });
    const wire = toGrpcError(original);
    expect(wire.code).toBe(ERROR_CODES[code].grpc);
    const back = fromGrpcError(wire);
    expect(back.code).toBe(code);
    expect(back.message).toBe(`message for ${code}`);
    expect(back.param).toBe(original.param);
    expect(back.meta).toEqual({ retry_after: '7' });
    expect(back.httpStatus).toBe(ERROR_CODES[code].http);
  });

  it.each([
    [status.UNAVAILABLE, 'service_unavailable'],
    [status.DEADLINE_EXCEEDED, 'service_unavailable'],
    [status.INTERNAL, 'internal_error'],
    [status.INVALID_ARGUMENT, 'internal_error'],
  ])('maps a bare gRPC status %i without ErrorInfo to %s', (code, expected) => {
    expect(fromGrpcError({ code, details: 'raw peer text' }).code).toBe(expected);
  });

  it('never lets a raw peer message through when there is no ErrorInfo', () => {
    expect(fromGrpcError({ code: status.INTERNAL, details: 'pg: relation users does not exist' }).message).not.toContain('pg');
  });

  it('renders the contract body', () => {
    const body = toErrorBody(new MurmurError('invalid_request', 'limit must be 1–100', { param: 'limit' }), 'req_abc');
    expect(body).toEqual({
      error: { type: 'invalid_request_error', code: 'invalid_request', message: 'limit must be 1–100', param: 'limit', request_id: 'req_abc' },
    });
  });
});
