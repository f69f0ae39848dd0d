/** Where `npm start`'s processes serve their metrics: off by default, else consecutive loopback ports, each child its own. */
import { METRICS_PORT_VARIABLE, metricsAddresses, metricsEnv, metricsLine } from '../src/metrics-addresses';

describe('metrics under npm start', () => {
  it('serves none unless MURMUR_METRICS_PORT is set, and blanks an inherited MURMUR_METRICS_ADDR', () => {
    expect(metricsAddresses(undefined)).toEqual([]);
    expect(metricsEnv([], 'gateway')).toEqual({ MURMUR_METRICS_ADDR: '' });
    expect(metricsLine([])).toBeUndefined();
  });

  it('gives each process its own loopback port from the first, tried and named by the launcher variable', () => {
    const addresses = metricsAddresses(9464);
    expect(addresses.map((a) => `${a.name}=${a.host}:${a.port}`)).toEqual([
      'gateway=127.0.0.1:9464',
      'auth=127.0.0.1:9465',
      'billing=127.0.0.1:9466',
      'library=127.0.0.1:9467',
      'transcription=127.0.0.1:9468',
      'conversion=127.0.0.1:9469',
    ]);
    expect(new Set(addresses.map((a) => a.variable))).toEqual(new Set([METRICS_PORT_VARIABLE]));
    expect(metricsEnv(addresses, 'billing')).toEqual({ MURMUR_METRICS_ADDR: '127.0.0.1:9466' });
    expect(metricsEnv(addresses, 'app')).toEqual({ MURMUR_METRICS_ADDR: '' });
    expect(metricsLine(addresses)).toBe(
      'Metrics (Prometheus): gateway http://127.0.0.1:9464/metrics, auth :9465, billing :9466, library :9467, transcription :9468, conversion :9469.',
    );
  });
});
