import { ClientClosedError, ClientOfflineError, ConnectionTimeoutError, SocketClosedUnexpectedlyError, SocketTimeoutError } from 'redis';
import { MurmurError } from '@murmur/contract';
import { DependencyTimeoutError, fromGrpcError, unavailableCause, unavailableError, withDeadline } from '@murmur/kit';

/** An error as `pg` or Node raise it: a message plus a string code. */
function coded(message: string, code?: string): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

describe('what counts as an unavailable dependency (service_unavailable, never internal_error)', () => {
  it.each<[string, unknown]>([
    ['a refused connection', coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')],
    ['a reset connection', coded('read ECONNRESET', 'ECONNRESET')],
    ['a broken pipe', coded('write EPIPE', 'EPIPE')],
    ['a connect timeout of the OS', coded('connect ETIMEDOUT', 'ETIMEDOUT')],
    ['an unreachable host', coded('connect EHOSTUNREACH', 'EHOSTUNREACH')],
    ['a DNS failure', coded('getaddrinfo EAI_AGAIN db', 'EAI_AGAIN')],
    ['57P01 admin_shutdown', coded('terminating connection due to administrator command', '57P01')],
    ['57P02 crash_shutdown', coded('terminating connection because of crash of another server process', '57P02')],
    ['57P03 cannot_connect_now', coded('the database system is starting up', '57P03')],
    ['08006 connection_failure', coded('connection failure', '08006')],
    ['08001 unable to connect', coded('could not connect', '08001')],
    ['53300 too_many_connections', coded('sorry, too many clients already', '53300')],
    ['25006 read-only after a failover', coded('cannot execute INSERT in a read-only transaction', '25006')],
    ['pg: Connection terminated unexpectedly', coded('Connection terminated unexpectedly')],
    ['pg: Connection terminated due to connection timeout', coded('Connection terminated due to connection timeout')],
    ['pg-pool: connect timeout', coded('timeout exceeded when trying to connect')],
    ['pg: client not queryable', coded('Client has encountered a connection error and is not queryable')],
    ['redis: offline (reconnecting)', new ClientOfflineError()],
    ['redis: closed client', new ClientClosedError()],
    ['redis: connect timeout', new ConnectionTimeoutError()],
    ['redis: socket closed', new SocketClosedUnexpectedlyError()],
    ['redis: silent socket', new SocketTimeoutError(3000)],
    ['redis: LOADING reply', coded('LOADING Redis is loading the dataset in memory')],
    ['a call past its deadline', new DependencyTimeoutError('redis', 1000)],
    ['an AggregateError of refused addresses', Object.assign(new AggregateError([coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED')]), {})],
    ['a wrapped cause', new Error('query failed', { cause: coded('read ECONNRESET', 'ECONNRESET') })],
  ])('%s', (_, err) => {
    expect(unavailableCause(err)).toBeDefined();
    expect(unavailableError(err)?.code).toBe('service_unavailable');
    expect(fromGrpcError(err).code).toBe('service_unavailable');
  });

  it.each<[string, unknown]>([
    ['a unique violation', coded('duplicate key value violates unique constraint', '23505')],
    ['a syntax error', coded('syntax error at or near "SELEC"', '42601')],
    ['a missing relation', coded('relation "users" does not exist', '42P01')],
    ['a serialization failure (a conflict, not an outage)', coded('could not serialize access', '40001')],
    ['a statement timeout', coded('canceling statement due to statement timeout', '57014')],
    ['a Redis script error', coded('ERR Error running script')],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a non-error value', 'boom'],
    ['null', null],
  ])('not %s', (_, err) => {
    expect(unavailableCause(err)).toBeUndefined();
    expect(unavailableError(err)).toBeUndefined();
    expect(fromGrpcError(err).code).toBe('internal_error');
  });

  it('keeps a MurmurError as it is', () => {
    const own = new MurmurError('service_unavailable', 'The rate limiter is unavailable');
    expect(unavailableError(own)).toBe(own);
    expect(unavailableError(new MurmurError('not_found'))).toBeUndefined();
  });
});

describe('withDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('rejects with an unavailable error when the call does not answer in time', async () => {
    const never = new Promise<string>(() => undefined);
    const bounded = withDeadline(never, 1_000, 'redis');
    const outcome = bounded.then(() => 'answered', (err: unknown) => err);
    jest.advanceTimersByTime(999);
    await Promise.resolve();
    jest.advanceTimersByTime(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(DependencyTimeoutError);
    expect(unavailableCause(err)).toBe('redis did not answer within 1000 ms');
  });

  it('settles like the call when it answers in time', async () => {
    await expect(withDeadline(Promise.resolve('ok'), 1_000, 'redis')).resolves.toBe('ok');
    await expect(withDeadline(Promise.reject(new Error('nope')), 1_000, 'redis')).rejects.toThrow('nope');
  });
});
