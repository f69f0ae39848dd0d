/**
 * The kit's metrics: the process registry served over HTTP by the metrics server (text format,
 * process metrics, nothing but /metrics), a taken port as the ports decision wants it, label
 * children kept per combination and capped. (The gRPC interceptor's counts: grpc-server.test.ts.)
 */
import * as net from 'node:net';
import {
  BindError,
  counterChildren,
  createLogger,
  defineCounter,
  LabelledChildren,
  MAX_SERIES_PER_METRIC,
  METRICS_ADDR_VARIABLE,
  metricsSchema,
  OVERFLOW_LABEL,
  startMetricsServer,
  loadConfig,
  type MetricsServer,
} from '@murmur/kit';
import { sampleSum, scrape } from '@murmur/kit/testing';

const log = createLogger('metrics-test', 'silent');

describe('the metrics server', () => {
  let server: MetricsServer;
  const url = () => `http://${server.address}/metrics`;

  beforeAll(async () => {
    server = await startMetricsServer('127.0.0.1:0', log);
  });
  afterAll(() => server.stop());

  it('serves the registry in Prometheus text format, with the process metrics', async () => {
    const counter = defineCounter('murmur_test_things_total', 'Things a test did.', ['kind']);
    counter.labels('a').inc(3);
    const s = await scrape(url());
    expect(s.types.get('murmur_test_things_total')).toBe('counter');
    expect(sampleSum(s, 'murmur_test_things_total', { kind: 'a' })).toBe(3);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_p99_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(s.types.has(name)).toBe(true);
    }
  });

  it('answers nothing but GET /metrics', async () => {
    expect((await fetch(`http://${server.address}/`)).status).toBe(404);
    expect((await fetch(`http://${server.address}/api/v1/me`)).status).toBe(404);
    const post = await fetch(url(), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('refuses a port another program holds with a BindError naming MURMUR_METRICS_ADDR', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const err = await startMetricsServer(`127.0.0.1:${port}`).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BindError);
      expect((err as BindError).variable).toBe(METRICS_ADDR_VARIABLE);
      expect((err as BindError).address).toBe(`127.0.0.1:${port}`);
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });

  it('takes MURMUR_METRICS_ADDR as host:port only, and none when unset or empty', () => {
    expect(loadConfig(metricsSchema, {}).MURMUR_METRICS_ADDR).toBeUndefined();
    expect(loadConfig(metricsSchema, { MURMUR_METRICS_ADDR: '' }).MURMUR_METRICS_ADDR).toBeUndefined();
    expect(loadConfig(metricsSchema, { MURMUR_METRICS_ADDR: '[::1]:9464' }).MURMUR_METRICS_ADDR).toBe('[::1]:9464');
    expect(() => loadConfig(metricsSchema, { MURMUR_METRICS_ADDR: '9464' })).toThrow(/MURMUR_METRICS_ADDR/);
    expect(() => loadConfig(metricsSchema, { MURMUR_METRICS_ADDR: 'http://x:9464' })).toThrow(/MURMUR_METRICS_ADDR/);
  });
});

describe('labelled children', () => {
  it('makes one child per combination and keeps it', () => {
    const made: string[][] = [];
    const children = new LabelledChildren(3, (values) => (made.push(values), { values }));
    const first = children.get('/api/v1/me', 'GET', 200);
    expect(children.get('/api/v1/me', 'GET', 200)).toBe(first);
    expect(children.get('/api/v1/me', 'GET', 404)).not.toBe(first);
    expect(made).toEqual([
      ['/api/v1/me', 'GET', '200'],
      ['/api/v1/me', 'GET', '404'],
    ]);
  });

  it(`counts every combination past ${MAX_SERIES_PER_METRIC} as ${OVERFLOW_LABEL}`, async () => {
    const counter = defineCounter('murmur_test_capped_total', 'A metric whose label is no closed set.', ['value']);
    const children = counterChildren(counter, 1);
    for (let i = 0; i < MAX_SERIES_PER_METRIC + 5; i++) children.get(`v${i}`).inc();
    const series = (await counter.get()).values;
    expect(series).toHaveLength(MAX_SERIES_PER_METRIC + 1);
    expect(series.find((s) => s.labels.value === OVERFLOW_LABEL)?.value).toBe(5);
  });
});
