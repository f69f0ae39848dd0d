/**
 * One call, one trace: every process runs as its own child (the built dist, as in production)
 * exporting OTLP/HTTP JSON to a receiver in this test. A REST read, a conversion, a
 * transcription and an MCP tools/call each produce exactly one trace id holding spans of every
 * service the call touches, with parent links gateway server → gRPC client → service server → pg.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin } from '@murmur/gateway';
import { startProcessStack, type ProcessStack } from './support/process-stack';

interface Span {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
}

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';

describe('tracing across processes', () => {
  const spans: Span[] = [];
  /** Every path the collector was sent something on. */
  const paths = new Set<string>();
  let receiver: http.Server;
  let stack: ProcessStack;
  let base: string;
  let key: string;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      paths.add(req.url ?? '');
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const doc = JSON.parse(body) as { resourceSpans?: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }; scopeSpans: Array<{ spans: Span[] }> }> };
        for (const rs of doc.resourceSpans ?? []) {
          const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
          for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service, parentSpanId: s.parentSpanId ?? '' });
        }
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    const otlp = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    stack = await startProcessStack({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '200',
        // Were metrics on (the SDK's default), they would reach the collector every 200 ms.
        OTEL_METRIC_EXPORT_INTERVAL: '200',
      },
    });
    base = stack.base;
    const { clients } = stack;
    await admin.createUser(clients, 'trace@example.com', 'Trace', 'pro');
    await admin.seed(clients, 'trace@example.com', 3);
    key = (await admin.createKey(clients, 'trace@example.com', '90')).key;
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  /** Sends a request, then waits until its trace holds spans of every expected service. */
  async function traced(send: () => Promise<Response>, services: string[]) {
    const res = await send();
    expect(res.ok).toBe(true);
    const traceparent = res.headers.get('traceparent');
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
    const traceId = traceparent!.split('-')[1]!;
    const deadline = Date.now() + 15_000;
    let mine: Span[] = [];
    while (Date.now() < deadline) {
      mine = spans.filter((s) => s.traceId === traceId);
      const rooted = mine.some((s) => !s.parentSpanId && s.service === 'murmur-gateway');
      if (rooted && services.every((svc) => mine.some((s) => s.service === `murmur-${svc}`))) {
        await new Promise((r) => setTimeout(r, 600)); // stragglers of the same batch window
        mine = spans.filter((s) => s.traceId === traceId);
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return { traceId, spans: mine, body: await res.text() };
  }

  function checkTree(trace: Span[], rootName: RegExp) {
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const roots = trace.filter((s) => !s.parentSpanId);
    expect(roots).toHaveLength(1);
    expect(roots[0]).toMatchObject({ service: 'murmur-gateway' });
    expect(roots[0]!.name).toMatch(rootName);
    for (const s of trace) if (s.parentSpanId) expect(byId.has(s.parentSpanId)).toBe(true);
    // Every service-side gRPC server span hangs under a gateway (or service) gRPC client span.
    for (const server of trace.filter((s) => s.kind === 2 && s.name.startsWith('grpc.'))) {
      const parent = byId.get(server.parentSpanId)!;
      expect(parent.kind).toBe(3);
      expect(parent.name).toBe(server.name);
    }
  }

  it('makes one trace of GET /recordings: gateway → auth and library → pg', async () => {
    const { spans: trace } = await traced(() => fetch(`${base}/api/v1/recordings?limit=2`, { headers: { authorization: `Bearer ${key}` } }), ['gateway', 'auth', 'library']);
    checkTree(trace, /GET/);
    const library = trace.filter((s) => s.service === 'murmur-library');
    expect(library.some((s) => s.name.startsWith('pg.query'))).toBe(true);
    const pg = library.find((s) => s.name.startsWith('pg.query'))!;
    expect(trace.find((s) => s.spanId === pg.parentSpanId)?.name).toBe('grpc.murmur.library.v1.LibraryService/ListRecordings');
  });

  it('makes one trace of POST /convert: gateway → billing and conversion → billing and library', async () => {
    const { spans: trace } = await traced(
      () =>
        fetch(`${base}/api/v1/convert`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ transcript: 'Marcus will send the deck by Friday. We agreed to ship in March.', kind: 'summary' }),
        }),
      ['gateway', 'billing', 'conversion'],
    );
    checkTree(trace, /POST/);
    expect(trace.some((s) => s.service === 'murmur-conversion' && s.name === 'grpc.murmur.billing.v1.BillingService/Reserve' && s.kind === 3)).toBe(true);
  });

  it('makes one trace of POST /transcribe: gateway → billing and transcription → billing', async () => {
    const form = new FormData();
    form.append('audio', new Blob([fs.readFileSync(WAV)], { type: 'audio/wav' }), 'speech.wav');
    const { spans: trace } = await traced(
      () => fetch(`${base}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form }),
      ['gateway', 'billing', 'transcription'],
    );
    checkTree(trace, /POST/);
    expect(trace.some((s) => s.service === 'murmur-transcription' && s.name === 'grpc.murmur.billing.v1.BillingService/Commit')).toBe(true);
  });

  it('makes one trace of an MCP tools/call', async () => {
    const { spans: trace, body } = await traced(
      () =>
        fetch(`${base}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2025-06-18',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_folders', arguments: {} } }),
        }),
      ['gateway', 'library'],
    );
    expect(JSON.parse(body).result.isError).toBeFalsy();
    checkTree(trace, /POST/);
  });

  it('sends the collector traces only: no metrics, no logs', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    expect([...paths]).toEqual(['/v1/traces']);
  });
});
