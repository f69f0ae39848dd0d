/**
 * mcp (issue 6): what the hosted MCP front end costs over REST on the same read, through the
 * same gateway, in the same run. Load on `tools/call list_recordings {limit: 20}` (one POST /mcp:
 * stateless Streamable HTTP with JSON responses, no initialize per request) and on
 * `GET /api/v1/recordings?limit=20`, interleaved, same autocannon settings, same user and data —
 * on both protocol eras /mcp serves: 2025-06-18 (v1 SDK) and 2026-07-28 (v2 SDK, the per-request
 * envelope and Mcp-Method/Mcp-Name headers). Targets (issue 18): MCP req/s ≥ 0.9 × REST req/s, each era;
 * p99 ≤ 3 × p50 on every target.
 */
import { isDeepStrictEqual } from 'node:util';
import { machineInfo, redactUrl, type Benchmark, type BenchmarkReport } from './benchmark';
import { loadConnections } from './load';
import { interleavedRounds, maxOtherCpu, NOISE_PERCENT, r3, summarize } from './rounds';
import { analyze, BENCH_DATABASE, createBenchUser, redisNote, startStack } from './stack';

const REST_ROUTE = '/api/v1/recordings?limit=20';
const MCP_PROTOCOL_VERSION = '2025-06-18';
const MCP_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_recordings', arguments: { limit: 20 } } });
/** The same call on 2026-07-28: the request carries its own envelope. */
const CURRENT_REVISION = '2026-07-28';
const MCP_CURRENT_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'list_recordings',
    arguments: { limit: 20 },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': CURRENT_REVISION,
      'io.modelcontextprotocol/clientInfo': { name: 'murmur-bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
});

const SETTINGS = {
  connections: loadConnections(),
  pipelining: 1,
  warmup_seconds: 3,
  duration_seconds: 10,
  rounds: 2,
  seeded_recordings: 200,
  analyzed_after_seeding: true,
  log_level: 'warn',
};

const TARGETS = { ratio_min: 0.9, p99_over_p50_max: 3 };

type Target = 'rest' | 'mcp' | 'mcp_current';
const TARGET_ORDER: Target[] = ['rest', 'mcp', 'mcp_current'];

/**
 * Cheap checks run on every response by the load generator (the same cost on both sides):
 * REST answers the list envelope; MCP answers a JSON-RPC result with structuredContent and
 * without isError.
 */
const VERIFY: Record<Target, (body: string) => boolean> = {
  rest: (body) => body.startsWith('{"object":"list"'),
  mcp: (body) => body.includes('"result"') && body.includes('"structuredContent"') && !body.includes('"isError":true'),
  mcp_current: (body) => body.includes('"result"') && body.includes('"structuredContent"') && !body.includes('"isError":true'),
};

interface McpResponse {
  jsonrpc?: string;
  id?: unknown;
  result?: { content?: unknown; structuredContent?: Record<string, unknown>; isError?: boolean };
  error?: { code: number; message: string };
}

/**
 * One request of each kind before any load: both must be 200 with the expected page, and the
 * MCP result must not be an error. A server that demanded `initialize` first would answer 400
 * here ("Server not initialized"), which is reported as such.
 */
async function checkAnswers(gateway: string, mcpHeaders: Record<string, string>, restHeaders: Record<string, string>) {
  const rest = await fetch(`${gateway}${REST_ROUTE}`, { headers: restHeaders });
  const restText = await rest.text();
  if (rest.status !== 200) throw new Error(`GET ${REST_ROUTE} answered ${rest.status}: ${restText.slice(0, 300)}`);
  const restBody = JSON.parse(restText) as { data?: unknown[]; has_more?: boolean };
  if (!Array.isArray(restBody.data) || restBody.data.length !== 20) throw new Error(`GET ${REST_ROUTE} should list 20 recordings; got ${restText.slice(0, 300)}`);

  const mcp = await fetch(`${gateway}/mcp`, { method: 'POST', headers: mcpHeaders, body: MCP_BODY });
  const mcpText = await mcp.text();
  if (mcp.status !== 200) {
    const hint = /initiali[sz]/i.test(mcpText)
      ? ' The server demands an initialize request first: it is not stateless as DESIGN.md §4 requires, and a per-request benchmark would have to send initialize + notifications/initialized + tools/call.'
      : '';
    throw new Error(`POST /mcp tools/call list_recordings answered ${mcp.status}: ${mcpText.slice(0, 300)}.${hint}`);
  }
  const contentType = mcp.headers.get('content-type') ?? '';
  if (!contentType.startsWith('application/json')) throw new Error(`POST /mcp answered ${contentType}, not JSON (enableJsonResponse is expected)`);
  const parsed = JSON.parse(mcpText) as McpResponse;
  if (parsed.error) throw new Error(`tools/call list_recordings failed: ${parsed.error.code} ${parsed.error.message}`);
  const result = parsed.result;
  if (!result || result.isError) throw new Error(`tools/call list_recordings returned an error result: ${mcpText.slice(0, 300)}`);
  const structured = result.structuredContent;
  if (!structured || !Array.isArray(structured.data) || structured.data.length !== 20) {
    throw new Error(`tools/call list_recordings should list 20 recordings in structuredContent; got ${mcpText.slice(0, 300)}`);
  }
  if (!VERIFY.rest(restText) || !VERIFY.mcp(mcpText)) throw new Error('the per-response body checks reject a good answer; fix VERIFY in bench/src/mcp.ts');
  return {
    /** The tool's structuredContent is the REST body, next_cursor included. */
    same_data: isDeepStrictEqual(structured, restBody),
    response_bytes: { rest: Buffer.byteLength(restText), mcp: Buffer.byteLength(mcpText) },
    initialize_needed: false,
  };
}

async function runMcp(log: (line: string) => void): Promise<BenchmarkReport> {
  const timestamp = new Date().toISOString();
  const machine = machineInfo();
  const stack = await startStack(log, { services: ['auth', 'billing', 'library'], logLevel: SETTINGS.log_level });
  const { db, procs, redis } = stack;
  try {
    log(`seeding ${SETTINGS.seeded_recordings} recordings through the services' RPCs`);
    const user = await createBenchUser(stack, 'bench-mcp@murmur.test', { recordings: SETTINGS.seeded_recordings });
    await analyze(db.url);
    const mcpHeaders = {
      ...user.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_PROTOCOL_VERSION,
    };
    const mcpCurrentHeaders = { ...mcpHeaders, 'mcp-protocol-version': CURRENT_REVISION, 'mcp-method': 'tools/call', 'mcp-name': 'list_recordings' };
    const check = await checkAnswers(stack.gateway, mcpHeaders, user.headers);
    const current = await fetch(`${stack.gateway}/mcp`, { method: 'POST', headers: mcpCurrentHeaders, body: MCP_CURRENT_BODY });
    const currentText = await current.text();
    if (current.status !== 200 || !VERIFY.mcp_current(currentText)) throw new Error(`POST /mcp on ${CURRENT_REVISION} answered ${current.status}: ${currentText.slice(0, 300)}`);
    log(`one request each: 200; MCP structuredContent ${check.same_data ? 'equals' : 'DIFFERS FROM'} the REST body; ${check.response_bytes.rest} vs ${check.response_bytes.mcp} bytes`);

    const { runs, failures } = await interleavedRounds({
      targets: [
        { name: 'rest', load: { url: `${stack.gateway}${REST_ROUTE}`, headers: user.headers, verifyBody: VERIFY.rest } },
        { name: 'mcp', load: { url: `${stack.gateway}/mcp`, method: 'POST', headers: mcpHeaders, body: MCP_BODY, verifyBody: VERIFY.mcp } },
        { name: 'mcp_current', load: { url: `${stack.gateway}/mcp`, method: 'POST', headers: mcpCurrentHeaders, body: MCP_CURRENT_BODY, verifyBody: VERIFY.mcp_current } },
      ],
      settings: SETTINGS,
      procs,
      db: { url: db.url, name: BENCH_DATABASE },
      log,
    });
    procs.assertAlive();

    const rest = summarize(runs.rest!);
    const mcp = summarize(runs.mcp!);
    const mcpCurrent = summarize(runs.mcp_current!);
    const ratio = rest.requests_per_second > 0 ? r3(mcp.requests_per_second / rest.requests_per_second) : 0;
    const ratioCurrent = rest.requests_per_second > 0 ? r3(mcpCurrent.requests_per_second / rest.requests_per_second) : 0;
    const cpuRatio = mcp.cpu_ms_per_request > 0 ? r3(rest.cpu_ms_per_request / mcp.cpu_ms_per_request) : 0;
    const gatewayCpu = (runsOf: typeof runs.rest) => r3((runsOf ?? []).reduce((a, r) => a + (r.cpu_ms_per_request.gateway ?? 0), 0) / (runsOf?.length || 1));
    const otherCpu = maxOtherCpu(runs);
    const noisy = otherCpu > NOISE_PERCENT;
    const tails = { rest: rest.p99_over_p50, mcp: mcp.p99_over_p50, mcp_current: mcpCurrent.p99_over_p50 };
    const tailsMet = Object.values(tails).every((t) => t <= TARGETS.p99_over_p50_max);
    const targetsMet = {
      ratio: ratio >= TARGETS.ratio_min,
      ratio_current: ratioCurrent >= TARGETS.ratio_min,
      p99_over_p50: tailsMet,
      all: ratio >= TARGETS.ratio_min && ratioCurrent >= TARGETS.ratio_min && tailsMet,
    };

    const result = {
      benchmark: 'mcp',
      ok: failures.length === 0,
      failures,
      timestamp,
      requests: {
        rest: `GET ${REST_ROUTE}`,
        mcp: `POST /mcp ${MCP_BODY} (headers: content-type application/json, accept application/json + text/event-stream, mcp-protocol-version ${MCP_PROTOCOL_VERSION}, bearer key)`,
      },
      rest: { path: 'gateway REST route → library.ListRecordings', ...rest },
      mcp: { path: 'gateway /mcp on 2025-06-18: fresh v1 McpServer + StreamableHTTPServerTransport per request (stateless, JSON response) → same listRecordings operation → library.ListRecordings', ...mcp },
      mcp_current: { path: `gateway /mcp on ${CURRENT_REVISION}: v2 createMcpHandler, fresh McpServer per request → same listRecordings operation → library.ListRecordings`, ...mcpCurrent },
      ratio,
      ratio_current: ratioCurrent,
      p99_ms: { rest: rest.latency_ms.p99, mcp: mcp.latency_ms.p99 },
      p99_ratio: rest.latency_ms.p99 > 0 ? r3(mcp.latency_ms.p99 / rest.latency_ms.p99) : 0,
      p99_over_p50: tails,
      /** REST CPU per request ÷ MCP CPU per request over every process: the ratio a CPU-bound machine tends to. */
      cpu_ratio: cpuRatio,
      gateway_cpu_ms_per_request: { rest: gatewayCpu(runs.rest), mcp: gatewayCpu(runs.mcp), mcp_current: gatewayCpu(runs.mcp_current) },
      response_bytes: check.response_bytes,
      same_data_as_rest: check.same_data,
      initialize_needed: check.initialize_needed,
      max_other_cpu_percent: otherCpu,
      noisy,
      targets: TARGETS,
      targets_met: targetsMet,
      redis_used: redis,
      settings: {
        ...SETTINGS,
        order: Array.from({ length: SETTINGS.rounds }, () => TARGET_ORDER).flat(),
        aggregation:
          'each target is measured in every round (warm-up discarded); requests_per_second, p50 and p99 are the means of the rounds; percentiles per round are nearest-rank over every 2xx response time',
        response_checks: 'every response must be 200; REST bodies must start with {"object":"list"; MCP bodies must hold a JSON-RPC result with structuredContent and no "isError":true (counted as mismatches otherwise)',
        caches: redisNote(redis),
      },
      machine,
      postgres: { server_version: db.serverVersion, url: redactUrl(db.url) },
      notes: [
        'Stateless MCP: every tools/call is one POST with no session and no initialize; the gateway builds an McpServer, registers the eight tools and a transport for each request, then answers application/json.',
        'An MCP answer carries the page as structuredContent and, on these revisions, a text naming each recording (the full JSON text only for 2025-03-26 clients: docs/mcp.md), with a resource link per recording, inside a JSON-RPC envelope: see response_bytes.',
        `Load generator, gateway, auth, billing, library and Postgres share the machine's ${machine.cpus} core(s); on a CPU-bound machine the req/s ratio tends to cpu_ratio. noisy = processes outside the benchmark used more than ${NOISE_PERCENT}% of a core during a measurement.`,
        'A missed target does not fail the run; failures lists what makes a run invalid (non-200 responses, error results, connection errors, crashed processes).',
      ],
    };

    const fmt = (x: number, d = 2) => x.toFixed(d);
    return {
      result,
      failures,
      table: {
        headers: ['target', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/req', 'bytes'],
        rows: [
          ['REST GET /recordings', fmt(rest.requests_per_second, 0), fmt(rest.latency_ms.p50), fmt(rest.latency_ms.p99), fmt(rest.cpu_ms_per_request), String(check.response_bytes.rest)],
          ['MCP list_recordings (2025-06-18)', fmt(mcp.requests_per_second, 0), fmt(mcp.latency_ms.p50), fmt(mcp.latency_ms.p99), fmt(mcp.cpu_ms_per_request), String(check.response_bytes.mcp)],
          [`MCP list_recordings (${CURRENT_REVISION})`, fmt(mcpCurrent.requests_per_second, 0), fmt(mcpCurrent.latency_ms.p50), fmt(mcpCurrent.latency_ms.p99), fmt(mcpCurrent.cpu_ms_per_request), String(Buffer.byteLength(currentText))],
        ],
      },
      notes: [
        `ratio MCP/REST req/s = ${fmt(ratio, 3)} on 2025-06-18, ${fmt(ratioCurrent, 3)} on ${CURRENT_REVISION} (target ≥ ${TARGETS.ratio_min}: ${targetsMet.ratio ? 'met' : 'MISSED'}, ${targetsMet.ratio_current ? 'met' : 'MISSED'}); cpu ratio ${fmt(cpuRatio, 3)}`,
        `p99/p50 = ${fmt(tails.rest)} REST, ${fmt(tails.mcp)} MCP 2025-06-18, ${fmt(tails.mcp_current)} MCP ${CURRENT_REVISION} (target ≤ ${TARGETS.p99_over_p50_max}: ${tailsMet ? 'met' : 'MISSED'})`,
        `gateway CPU per request: REST ${fmt(gatewayCpu(runs.rest))} ms, MCP ${fmt(gatewayCpu(runs.mcp))} ms on 2025-06-18, ${fmt(gatewayCpu(runs.mcp_current))} ms on ${CURRENT_REVISION}`,
        ...(noisy ? [`NOISY: other processes used up to ${otherCpu.toFixed(0)}% of a core during a measurement; repeat before trusting req/s and p99`] : []),
        `${redis ? 'Redis' : 'no Redis'}; ${machine.cpus} CPU(s) shared by everything; means of ${SETTINGS.rounds} interleaved rounds of ${SETTINGS.duration_seconds} s`,
      ],
    };
  } finally {
    await stack.stop();
  }
}

export const mcpBench: Benchmark = {
  name: 'mcp',
  description: 'MCP tools/call list_recordings vs REST GET /recordings through the same gateway: req/s ratio and p99',
  run: runMcp,
};
