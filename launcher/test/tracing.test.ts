/**
 * One call, one trace: every process runs as its own child (the built dist, as in production)
 * exporting OTLP/HTTP JSON to a receiver in this test. A REST read, a conversion, a
 * transcription and an MCP tools/call each produce exactly one trace id holding spans of every
 * service the call touches, with parent links gateway server → gRPC client → service server → pg.
 * Then every string the collector received (resource attributes, span names, attributes, events,
 * links) is searched for what must never reach a trace: the API key, an Authorization value,
 * transcript text and audio.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { admin } from '@murmur/app';
import { startProcessStack, type ProcessStack } from './support/process-stack';
import { connectLive, pcmOfWav } from '../../gateway/test/support/live-client';

interface Span {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  kind: number;
}

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';
const CONVERT_INPUT = 'Marcus will send the deck by Friday. We agreed to ship in March.';
const MCP_CONVERT_INPUT = 'Priya booked the auditorium for the quarterly review. Elena drafts the agenda before Tuesday.';

/** What must never reach a trace. */
interface Secrets {
  key: string;
  /** Texts whose runs of three words must not appear: transcripts recognised and sent to convert. */
  transcripts: string[];
  /** The uploaded audio file. */
  audio: Buffer;
}

/** Every string in an OTLP export, with where it sits (`resourceSpans[0].scopeSpans[0].spans[3].attributes[2].value.stringValue`). */
function exportedStrings(value: unknown, where = ''): Array<{ where: string; value: string }> {
  if (typeof value === 'string') return [{ where, value }];
  if (Array.isArray(value)) return value.flatMap((v, i) => exportedStrings(v, `${where}[${i}]`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => exportedStrings(v, where ? `${where}.${k}` : k));
  return [];
}

/** Lower-case words, so a transcript is found whatever punctuation or case a span gives it. */
const words = (text: string) => text.toLowerCase().replace(/[^a-z0-9']+/g, ' ').trim().split(' ').filter(Boolean);

/** Where in the exports a secret appears; empty when none does. */
function leaks(docs: unknown[], secrets: Secrets): string[] {
  const base64 = secrets.audio.toString('base64');
  // A long prefix of the audio's base64, windows of it further in, and its raw header in hex.
  const audioMarks = [base64.slice(0, 64), ...[1, 2, 3].map((n) => base64.slice(Math.floor((base64.length * n) / 4 / 4) * 4).slice(0, 64)), secrets.audio.subarray(0, 32).toString('hex')];
  const trigrams = new Set(secrets.transcripts.flatMap((t) => words(t).flatMap((_, i, w) => (i + 3 <= w.length ? [w.slice(i, i + 3).join(' ')] : []))));
  const found: string[] = [];
  for (const { where, value } of docs.flatMap((d) => exportedStrings(d))) {
    // The report names the place; it never repeats the key itself.
    const shown = value.split(secrets.key).join('svc_[the key]').split(secrets.key.slice('svc_'.length)).join('[the key]').slice(0, 120);
    const at = (what: string) => found.push(`${what} at ${where}: ${JSON.stringify(shown)}`);
    if (value.includes(secrets.key) || value.includes(secrets.key.slice('svc_'.length))) at('the API key');
    if (/bearer\s+\S/i.test(value)) at('an Authorization value');
    if (/\.key$/.test(where) && /authorization|cookie/i.test(value)) at('an Authorization attribute');
    if (audioMarks.some((m) => value.includes(m))) at('audio');
    const w = words(value);
    for (let i = 0; i + 3 <= w.length; i++) {
      if (trigrams.has(w.slice(i, i + 3).join(' '))) {
        at(`transcript words "${w.slice(i, i + 3).join(' ')}"`);
        break;
      }
    }
  }
  return found;
}

describe('tracing across processes', () => {
  const spans: Span[] = [];
  /** Every OTLP export as received, searched for secrets at the end. */
  const docs: unknown[] = [];
  const transcripts: string[] = [CONVERT_INPUT, MCP_CONVERT_INPUT];
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
        docs.push(JSON.parse(body));
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
      // Complete: rooted at the gateway, every expected service seen, and every parent arrived (a
      // server span ends after its children, so its process may export it a batch later).
      const ids = new Set(mine.map((s) => s.spanId));
      if (rooted && services.every((svc) => mine.some((s) => s.service === `murmur-${svc}`)) && mine.every((s) => !s.parentSpanId || ids.has(s.parentSpanId))) {
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
          body: JSON.stringify({ transcript: CONVERT_INPUT, kind: 'summary' }),
        }),
      ['gateway', 'billing', 'conversion'],
    );
    checkTree(trace, /POST/);
    expect(trace.some((s) => s.service === 'murmur-conversion' && s.name === 'grpc.murmur.billing.v1.BillingService/Reserve' && s.kind === 3)).toBe(true);
  });

  it('makes one trace of POST /transcribe: gateway → billing and transcription → billing', async () => {
    const form = new FormData();
    form.append('audio', new Blob([fs.readFileSync(WAV)], { type: 'audio/wav' }), 'speech.wav');
    const { spans: trace, body } = await traced(
      () => fetch(`${base}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form }),
      ['gateway', 'billing', 'transcription'],
    );
    checkTree(trace, /POST/);
    transcripts.push((JSON.parse(body) as { text: string }).text);
    expect(trace.some((s) => s.service === 'murmur-transcription' && s.name === 'grpc.murmur.billing.v1.BillingService/Commit')).toBe(true);
  });

  it('makes one trace of a live stream: the gateway\'s span of the socket → billing and transcription → billing', async () => {
    const live = await connectLive(base, { key });
    await live.next('open');
    await live.stream(pcmOfWav(WAV).subarray(0, 64_000));
    live.control('close');
    await live.next('closed');
    transcripts.push(live.messages.filter((m) => m.type === 'final').map((m) => m.text).join(' '));
    let trace: Span[] = [];
    for (let i = 0; i < 75; i++) {
      const root = spans.find((s) => s.service === 'murmur-gateway' && s.name === 'GET /api/v1/listen');
      trace = root ? spans.filter((s) => s.traceId === root.traceId) : [];
      if (trace.some((s) => s.service === 'murmur-transcription' && s.name === 'grpc.murmur.billing.v1.BillingService/Commit')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 600)); // stragglers of the same batch window
    trace = spans.filter((s) => s.traceId === trace[0]?.traceId);
    checkTree(trace, /^GET \/api\/v1\/listen$/);
    expect(trace.some((s) => s.service === 'murmur-gateway' && s.name === 'grpc.murmur.billing.v1.BillingService/AdmitAiRequest')).toBe(true);
    expect(trace.some((s) => s.service === 'murmur-transcription' && s.name === 'grpc.murmur.transcription.v1.TranscriptionService/StreamTranscription')).toBe(true);
    expect(trace.some((s) => s.service === 'murmur-transcription' && s.name === 'grpc.murmur.billing.v1.BillingService/Commit')).toBe(true);
  });

  /** A JSON-RPC tools/call to /mcp, as a client sends it. */
  const mcpCall = (name: string, args: Record<string, unknown>) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });

  it('makes one trace of an MCP tools/call', async () => {
    const { spans: trace, body } = await traced(() => mcpCall('list_folders', {}), ['gateway', 'library']);
    expect(JSON.parse(body).result.isError).toBeFalsy();
    checkTree(trace, /POST/);
  });

  it('makes one trace of a passage search, and keeps its query out of it', async () => {
    // Words of a transcript the leak search below looks for: a span holding the query would leak them.
    const query = encodeURIComponent('send the deck by Friday');
    const { spans: trace } = await traced(() => fetch(`${base}/api/v1/search?q=${query}`, { headers: { authorization: `Bearer ${key}` } }), ['gateway', 'library']);
    checkTree(trace, /GET/);
    // The span holds the query's place, not its words (the leak search at the end reads every export).
    expect(JSON.stringify(docs)).toContain('q=REDACTED');
  });

  it('makes one trace of each MCP AI tool: transcribe (base64 audio) and convert', async () => {
    const audio = `data:audio/wav;base64,${fs.readFileSync(WAV).toString('base64')}`;
    const transcribed = await traced(() => mcpCall('transcribe', { audio_base64: audio }), ['gateway', 'billing', 'transcription']);
    const result = JSON.parse(transcribed.body).result as { isError?: boolean; structuredContent: { text: string } };
    expect(result.isError).toBeFalsy();
    checkTree(transcribed.spans, /POST/);
    transcripts.push(result.structuredContent.text);
    const converted = await traced(() => mcpCall('convert', { transcript: MCP_CONVERT_INPUT, kind: 'summary' }), ['gateway', 'billing', 'conversion']);
    expect(JSON.parse(converted.body).result.isError).toBeFalsy();
    checkTree(converted.spans, /POST/);
  });

  it('traces no background work: migrations, the job queue’s polling and supervisor, billing’s expiry sweep start no traces of their own', () => {
    // Seconds of pg-boss polling (every 0.5 s) have passed by now; traced, each poll would be a root
    // span of its own, as would start-up migrations. (Roots at a service's gRPC server are the
    // test's own admin calls, made without a trace.)
    const roots = spans.filter((s) => !s.parentSpanId && /^pg[.-]/.test(s.name));
    expect(roots.map((s) => `${s.service} ${s.name}`)).toEqual([]);
  });

  it('sends the collector traces only: no metrics, no logs', async () => {
    await new Promise((r) => setTimeout(r, 1000));
    expect([...paths]).toEqual(['/v1/traces']);
  });

  it('keeps the API key, Authorization values, transcripts and audio out of every span, event, link and resource', () => {
    const secrets: Secrets = { key, transcripts, audio: fs.readFileSync(WAV) };
    // What is searched for is really there to be found: three recognised transcripts (one live), two inputs.
    expect(transcripts.filter((t) => words(t).length >= 3)).toHaveLength(5);
    expect(docs.flatMap((d) => exportedStrings(d)).length).toBeGreaterThan(100);
    // The search finds a planted leak of each kind (so an empty answer below means something).
    const planted = { resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'x', attributes: [
      { key: 'k', value: { stringValue: `Bearer ${key}` } },
      { key: 'http.request.header.authorization', value: { stringValue: 'x' } },
      { key: 'a', value: { stringValue: secrets.audio.toString('base64').slice(0, 2000) } },
      { key: 't', value: { stringValue: transcripts[2]!.toUpperCase() } },
    ] }] }] }] };
    expect(leaks([planted], secrets).map((l) => l.split(' at ')[0])).toEqual(
      expect.arrayContaining(['the API key', 'an Authorization value', 'an Authorization attribute', 'audio', expect.stringMatching(/^transcript words/)]),
    );
    expect(leaks(docs, secrets)).toEqual([]);
  });
});
