/**
 * `npm run bench -- url-webhooks` (issue 14), on the real topology:
 *  (a) the same 5-minute speech file transcribed by POST /transcribe as a multipart upload and
 *      as an `audio_url` the gateway downloads from a file server on this machine (allowed for
 *      that address only: MURMUR_AUDIO_URL_ALLOW_CIDRS); alternated rounds, ratio of the medians,
 *      the transcripts compared;
 *  (b) webhook latency: from a job's `finished_at` (the database's clock, this machine) to its
 *      signed event arriving at a receiver here, p50/p99 over 20 short jobs.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { machineInfo, type Benchmark, type BenchmarkReport } from './benchmark';
import { createBenchUser, startStack } from './stack';
import { ffmpeg, tempDir } from './transcribe-audio';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0880.wav';
const SETTINGS = { minutes: 5, rounds: 3, webhook_jobs: 20 };

type Json = Record<string, any>;
const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export const urlWebhooksBench: Benchmark = {
  name: 'url-webhooks',
  description: 'audio_url from a local server ÷ multipart upload on one 5-min file (target ≤ 1.05); job end → webhook received, p50/p99',
  async run(log): Promise<BenchmarkReport> {
    const tmp = await tempDir('murmur-bench-url-');
    const failures: string[] = [];
    const file = path.join(tmp.dir, 'speech.wav');
    await ffmpeg(['-stream_loop', '-1', '-i', WAV, '-t', String(SETTINGS.minutes * 60), '-ar', '16000', '-ac', '1', file]);
    const bytes = fs.readFileSync(file);
    // Serves the audio on GET; receives webhooks on POST (their arrival times by job id).
    const arrived = new Map<string, number>();
    const server = http.createServer((req, res) => {
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': bytes.length }).end(bytes);
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const at = Date.now();
        arrived.set((JSON.parse(body) as Json).data.id as string, at);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const stack = await startStack(log, {
      services: ['auth', 'billing', 'library', 'transcription'],
      env: {
        MURMUR_TRANSCRIPTION_ENGINE: 'pocketsphinx',
        MURMUR_AUDIO_URL_ALLOW_CIDRS: '127.0.0.1/32',
        MURMUR_AUDIO_URL_PORTS: `80,443,${port}`,
        MURMUR_WEBHOOK_ALLOW_CIDRS: '127.0.0.1/32',
        MURMUR_WEBHOOK_ALLOW_HTTP: 'true',
        MURMUR_WEBHOOK_PORTS: `80,443,${port}`,
      },
    });
    try {
      const user = await createBenchUser(stack, `url-${Date.now()}@bench.example`, { monthlyCredits: 100_000 });
      const call = async (body: FormData | string, headers: Record<string, string> = {}) => {
        const t0 = performance.now();
        const res = await fetch(`${stack.gateway}/api/v1/transcribe`, { method: 'POST', headers: { ...user.headers, ...headers }, body, signal: AbortSignal.timeout(30 * 60_000) });
        const json = (await res.json()) as Json;
        if (res.status !== 200) throw new Error(`POST /transcribe answered ${res.status}: ${JSON.stringify(json)}`);
        return { ms: performance.now() - t0, text: json.text as string };
      };
      const uploads: number[] = [];
      const links: number[] = [];
      let same = true;
      log(`${SETTINGS.minutes}-minute file (${(bytes.length / 1e6).toFixed(1)} MB): upload and audio_url, alternated ${SETTINGS.rounds}×…`);
      for (let r = 0; r < SETTINGS.rounds; r++) {
        const form = new FormData();
        form.append('audio', new Blob([bytes], { type: 'audio/wav' }), 'speech.wav');
        const up = await call(form);
        const link = await call(JSON.stringify({ audio_url: `http://127.0.0.1:${port}/speech.wav` }), { 'content-type': 'application/json' });
        uploads.push(up.ms);
        links.push(link.ms);
        same &&= up.text === link.text;
        log(`    round ${r + 1}: upload ${round(up.ms / 1000, 2)} s, audio_url ${round(link.ms / 1000, 2)} s`);
      }
      const ratio = round(median(links) / median(uploads));
      if (!same) failures.push('the audio_url transcript differs from the upload’s');

      // (b) webhook latency, short jobs one after another (fresh users under the AI rate limit).
      log(`(b) ${SETTINGS.webhook_jobs} short jobs with a webhook: finished_at → event received…`);
      const latencies: number[] = [];
      for (let i = 0; i < SETTINGS.webhook_jobs; i++) {
        const u = await createBenchUser(stack, `hook-${Date.now()}-${i}@bench.example`, { monthlyCredits: 1000 });
        await stack.procs.whileAlive(stack.clients.transcription.rotateWebhookSecret({ userId: u.userId }));
        const form = new FormData();
        form.append('webhook_url', `http://127.0.0.1:${port}/hooks`);
        form.append('audio', new Blob([fs.readFileSync(WAV)], { type: 'audio/wav' }), 'short.wav');
        const res = await fetch(`${stack.gateway}/api/v1/transcriptions`, { method: 'POST', headers: u.headers, body: form });
        const job = (await res.json()) as Json;
        if (res.status !== 202) throw new Error(`POST /transcriptions answered ${res.status}`);
        let done: Json = job;
        while (!arrived.has(job.id)) {
          await new Promise((r) => setTimeout(r, 20));
          if (Date.now() - new Date(job.created_at).getTime() > 120_000) throw new Error(`no webhook for ${job.id}`);
        }
        done = (await (await fetch(`${stack.gateway}/api/v1/transcriptions/${job.id}`, { headers: u.headers })).json()) as Json;
        latencies.push(arrived.get(job.id)! - new Date(done.finished_at).getTime());
      }
      const sorted = [...latencies].sort((a, b) => a - b);
      const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
      const webhook = { jobs: latencies.length, p50_ms: pct(50), p99_ms: pct(99), max_ms: sorted[sorted.length - 1] };
      log(`    p50 ${webhook.p50_ms} ms, p99 ${webhook.p99_ms} ms`);
      const result = {
        timestamp: new Date().toISOString(),
        machine: machineInfo(),
        settings: SETTINGS,
        upload_seconds: uploads.map((x) => round(x / 1000, 2)),
        audio_url_seconds: links.map((x) => round(x / 1000, 2)),
        ratio_of_medians: ratio,
        same_transcript: same,
        webhook_latency: webhook,
        targets: { audio_url_over_upload_le_1_05: ratio <= 1.05 },
      };
      return {
        result: { ...result, benchmark: 'url-webhooks', targets_met: ratio <= 1.05 },
        table: {
          headers: ['measure', 'value', 'target'],
          rows: [
            ['(a) audio_url ÷ upload (medians)', String(ratio), '≤ 1.05'],
            ['(b) job end → webhook p50 / p99', `${webhook.p50_ms} / ${webhook.p99_ms} ms`, '—'],
          ],
        },
        notes: [],
        failures,
      };
    } finally {
      await stack.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await tmp.remove();
    }
  },
};
