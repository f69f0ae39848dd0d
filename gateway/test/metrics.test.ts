/**
 * Operators' metrics end to end (decision 0041): the whole system in this process (gateway,
 * auth, billing, library, transcription with no worker taking jobs, conversion) and a metrics
 * server on a port of its own, scraped over HTTP as Prometheus does. Real REST and MCP calls move
 * the counters and histograms with route templates, tool names, RPC methods and contract codes
 * as labels — never the key, the user id or a transcript; a real convert moves the credit
 * counters; a queued job shows in the jobs gauge and the oldest-job age, and its cancel releases
 * its credits; and every metric the Grafana dashboard reads is one these processes export.
 * (One process here: the gateway's and the services' metrics share its one registry.)
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { startMetricsServer, type MetricsServer } from '@murmur/kit';
import { labelValues, sampleSum, scrape, type Scrape } from '@murmur/kit/testing';
import { callTool, connectMcpAt, MCP_REVISIONS } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

const { dashboardMetricNames } = require('../../deploy/helm/lib/dashboard.js') as { dashboardMetricNames(dashboard: unknown): string[] };
const DASHBOARD = path.resolve(__dirname, '..', '..', 'deploy', 'helm', 'murmur', 'files', 'grafana-dashboard.json');
const SHORT_WAV = '/usr/share/pocketsphinx/test/data/cards/001.wav';
const TRANSCRIPT =
  'Maria said the quarterly budget is due on Friday. Tom will send the revised figures to finance tomorrow. We agreed to meet again next week to review the hiring plan.';

describe('operators’ metrics', () => {
  let sys: TestSystem;
  let metrics: MetricsServer;
  let user: { id: string; key: string; keyId: string };
  const read = () => scrape(`http://${metrics.address}/metrics`);
  /** How much the samples of `name` with `labels` grew between two scrapes. */
  const moved = (before: Scrape, after: Scrape, name: string, labels: Record<string, string>) => sampleSum(after, name, labels) - sampleSum(before, name, labels);

  beforeAll(async () => {
    sys = await startSystem({ ai: true, jobs: { work: false } });
    metrics = await startMetricsServer('127.0.0.1:0');
    const made = await sys.newUser('metrics@example.com');
    user = { id: made.user.id, key: made.key, keyId: made.keyId };
  });
  afterAll(async () => {
    await metrics?.stop();
    await sys?.stop();
  });

  /** No label value of the scrape holds anything of the user's. */
  function expectNothingOfTheUser(s: Scrape): void {
    for (const value of labelValues(s)) {
      for (const secret of [user.key, user.key.slice(0, 12), user.id, user.keyId, 'quarterly budget']) expect(value).not.toContain(secret);
    }
  }

  it('counts REST calls by route template, method, status and error code', async () => {
    const before = await read();
    expect((await get(sys.baseUrl, '/api/v1/me', user.key)).status).toBe(200);
    expect((await get(sys.baseUrl, '/api/v1/recordings/rec_0000000000000000000000', user.key)).status).toBe(404);
    expect((await get(sys.baseUrl, '/api/v1/me')).status).toBe(401);
    expect((await get(sys.baseUrl, `/api/v1/no-such-route/${user.id}`, user.key)).status).toBe(404);
    const after = await read();
    const requests = (labels: Record<string, string>) => moved(before, after, 'murmur_http_requests_total', labels);
    expect(requests({ route: '/api/v1/me', method: 'GET', status: '200', error_code: '' })).toBe(1);
    expect(requests({ route: '/api/v1/recordings/{id}', method: 'GET', status: '404', error_code: 'not_found' })).toBe(1);
    expect(requests({ route: '/api/v1/me', method: 'GET', status: '401', error_code: 'missing_api_key' })).toBe(1);
    expect(requests({ route: 'unmatched', method: 'GET', status: '404', error_code: 'not_found' })).toBe(1);
    expect(moved(before, after, 'murmur_http_request_duration_seconds_count', { route: '/api/v1/me', method: 'GET' })).toBe(2);
    expect(moved(before, after, 'murmur_http_request_duration_seconds_bucket', { route: '/api/v1/me', method: 'GET', le: '+Inf' })).toBe(2);
    // No raw path became a label: the one route of a 404 for an unknown id is its template.
    expect(after.samples.some((s) => s.labels.route?.includes('rec_0000'))).toBe(false);
    expectNothingOfTheUser(after);
  });

  it('counts the services’ RPCs by method, status and contract error code', async () => {
    const before = await read();
    expect((await get(sys.baseUrl, '/api/v1/recordings/rec_0000000000000000000001', user.key)).status).toBe(404);
    const after = await read();
    const library = { grpc_service: 'murmur.library.v1.LibraryService', grpc_method: 'GetRecording' };
    expect(moved(before, after, 'murmur_grpc_server_handled_total', { ...library, grpc_code: 'NOT_FOUND', error_code: 'not_found' })).toBe(1);
    expect(moved(before, after, 'murmur_grpc_server_handling_seconds_count', library)).toBe(1);
    expect(sampleSum(after, 'murmur_grpc_server_handled_total', { grpc_service: 'murmur.auth.v1.AuthService', grpc_method: 'VerifyKey', grpc_code: 'OK' })).toBeGreaterThan(0);
    expectNothingOfTheUser(after);
  });

  it.each(MCP_REVISIONS)('counts MCP tool calls by tool and error code (%s), and tells the HTTP metrics', async (revision) => {
    const client = await connectMcpAt(revision, sys.baseUrl, user.key);
    try {
      const before = await read();
      expect((await callTool(client, 'list_recordings', {})).isError).toBe(false);
      const missing = await callTool(client, 'get_recording', { recording_id: 'rec_0000000000000000000002' });
      expect(missing.isError).toBe(true);
      expect(missing.data.error.code).toBe('not_found');
      const after = await read();
      expect(moved(before, after, 'murmur_mcp_tool_calls_total', { tool: 'list_recordings', error_code: '' })).toBe(1);
      expect(moved(before, after, 'murmur_mcp_tool_calls_total', { tool: 'get_recording', error_code: 'not_found' })).toBe(1);
      expect(moved(before, after, 'murmur_mcp_tool_call_duration_seconds_count', { tool: 'get_recording' })).toBe(1);
      // The isError result's code reached res.locals: the /mcp request is counted with it.
      expect(moved(before, after, 'murmur_http_requests_total', { route: '/mcp', method: 'POST', status: '200', error_code: 'not_found' })).toBe(1);
      expectNothingOfTheUser(after);
    } finally {
      await client.close();
    }
  });

  it('counts the credits a convert reserves and commits', async () => {
    const before = await read();
    const res = await fetch(`${sys.baseUrl}/api/v1/convert`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ transcript: TRANSCRIPT, kind: 'summary' }),
    });
    const body = (await res.json()) as { credits_charged: number };
    expect(res.status).toBe(200);
    expect(body.credits_charged).toBeGreaterThan(0);
    const after = await read();
    expect(moved(before, after, 'murmur_billing_credits_committed_total', { operation: 'convert' })).toBe(body.credits_charged);
    expect(moved(before, after, 'murmur_billing_credits_reserved_total', { operation: 'convert' })).toBeGreaterThanOrEqual(body.credits_charged);
    expect(moved(before, after, 'murmur_billing_credits_released_total', { operation: 'convert' })).toBe(0);
    expect(moved(before, after, 'murmur_http_requests_total', { route: '/api/v1/convert', method: 'POST', status: '200', error_code: '' })).toBe(1);
    expectNothingOfTheUser(after);
  });

  it('shows a queued job in the jobs gauge with the age of the oldest, and counts the credits its cancel releases', async () => {
    const idle = await read();
    expect(sampleSum(idle, 'murmur_transcription_jobs', { state: 'queued' })).toBe(0);
    expect(sampleSum(idle, 'murmur_transcription_oldest_queued_job_age_seconds')).toBe(0);
    const submitted = Date.now();
    const form = new FormData();
    form.append('audio', new Blob([readFileSync(SHORT_WAV)], { type: 'audio/wav' }), 'speech.wav');
    const res = await fetch(`${sys.baseUrl}/api/v1/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${user.key}` }, body: form });
    const job = (await res.json()) as { id: string; status: string };
    expect(res.status).toBe(202);
    expect(job.status).toBe('queued');
    const queued = await read();
    const waited = (Date.now() - submitted) / 1000;
    expect(sampleSum(queued, 'murmur_transcription_jobs', { state: 'queued' })).toBe(1);
    expect(sampleSum(queued, 'murmur_transcription_jobs', { state: 'processing' })).toBe(0);
    const age = sampleSum(queued, 'murmur_transcription_oldest_queued_job_age_seconds');
    expect(age).toBeGreaterThan(0);
    expect(age).toBeLessThanOrEqual(waited + 1);
    const held = moved(idle, queued, 'murmur_billing_credits_reserved_total', { operation: 'transcribe' });
    expect(held).toBeGreaterThan(0);

    expect((await fetch(`${sys.baseUrl}/api/v1/transcriptions/${job.id}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${user.key}` } })).status).toBe(200);
    const canceled = await read();
    expect(sampleSum(canceled, 'murmur_transcription_jobs', { state: 'queued' })).toBe(0);
    expect(sampleSum(canceled, 'murmur_transcription_oldest_queued_job_age_seconds')).toBe(0);
    expect(moved(queued, canceled, 'murmur_billing_credits_released_total', { operation: 'transcribe' })).toBe(held);
    expect(moved(queued, canceled, 'murmur_http_requests_total', { route: '/api/v1/transcriptions/{id}/cancel', method: 'POST', status: '200', error_code: '' })).toBe(1);
    expectNothingOfTheUser(canceled);
  });

  it('exports every metric the Grafana dashboard reads', async () => {
    const s = await read();
    const names = dashboardMetricNames(JSON.parse(readFileSync(DASHBOARD, 'utf8')));
    expect(names.length).toBeGreaterThan(10);
    const exported = (name: string) => {
      if (s.types.has(name)) return true;
      const histogram = /^(.*)_(bucket|count|sum)$/.exec(name);
      return histogram !== null && s.types.get(histogram[1]!) === 'histogram';
    };
    expect(names.filter((n) => !exported(n))).toEqual([]);
    // And what the dashboard shows of each family is there: the live-streams gauge, the webhook counters.
    for (const name of ['murmur_live_streams_open', 'murmur_webhook_attempts_total', 'murmur_webhook_failures_total']) expect(names).toContain(name);
  });
});
