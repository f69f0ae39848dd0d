/**
 * Timelines over REST and MCP, end to end (issue 32): words, speakers, key terms, redaction and
 * captions through the gateway's parsers, the transcription service (ffmpeg + pocketsphinx on real
 * recordings; sherpa-onnx diarization on two espeak-ng voices with the stand-in models the
 * transcription tests build), the library and billing. Every response is checked against the
 * OpenAPI document (support/system.ts records them), and every tool result against the tool's
 * output schema on both MCP revisions.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { diarizationPort, type DiarizationPort } from '@murmur/transcription';
import { EMBEDDING_FILE, SEGMENTATION_FILES } from '../../services/transcription/src/diarization/models';
import { ffmpeg, LIBRIVOX_DIR } from '../../services/transcription/src/speech-fixtures';
import { standInEmbeddingModel, standInSegmentationModel } from '../../services/transcription/test/stand-in-models';
import { twoVoices } from '../../services/transcription/test/two-voices';
import { callTool, connectMcpAt, expectValidOutput, MCP_REVISIONS, outputValidators } from './support/mcp-client';
import { get, startSystem, type TestSystem } from './support/system';

type Json = Record<string, any>;

let sys: TestSystem;
let dir: string;
let diarization: DiarizationPort;
let conversation: Buffer;
let phone: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'murmur-gw-timelines-'));
  const models = path.join(dir, 'models');
  await mkdir(path.join(models, path.dirname(SEGMENTATION_FILES[0])), { recursive: true });
  await writeFile(path.join(models, SEGMENTATION_FILES[0]), standInSegmentationModel());
  await writeFile(path.join(models, EMBEDDING_FILE), standInEmbeddingModel());
  diarization = diarizationPort(models);
  sys = await startSystem({ ai: true, diarization });
  const talk = await twoVoices(dir);
  await writeFile(path.join(dir, 'talk.f32'), Buffer.from(talk.samples.buffer));
  await ffmpeg(['-f', 'f32le', '-ar', '16000', '-ac', '1', '-i', path.join(dir, 'talk.f32'), path.join(dir, 'talk.wav')]);
  conversation = await readFile(path.join(dir, 'talk.wav'));
  const sentence = path.join(LIBRIVOX_DIR, 'sense_and_sensibility_01_austen_64kb-0880.wav');
  const fives = path.join(LIBRIVOX_DIR, '..', 'cards', '004.wav');
  await ffmpeg(['-i', sentence, ...Array(5).fill(['-i', fives]).flat(), '-filter_complex', '[0][1][2][3][4][5]concat=n=6:v=0:a=1', '-ar', '16000', '-ac', '1', path.join(dir, 'phone.wav')]);
  phone = await readFile(path.join(dir, 'phone.wav'));
}, 120_000);
afterAll(async () => {
  await sys?.stop();
  await diarization?.close();
  await rm(dir, { recursive: true, force: true });
});

async function multipart(key: string, route: string, fields: Array<[string, string]>, file: Buffer) {
  const form = new FormData();
  for (const [k, v] of fields) form.append(k, v);
  form.append('audio', new Blob([file], { type: 'audio/wav' }), 'talk.wav');
  const res = await fetch(`${sys.baseUrl}/api/v1${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  const text = await res.text();
  return { status: res.status, text, body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : {}) as Json };
}

async function postJson(key: string, route: string, body: unknown) {
  const res = await fetch(`${sys.baseUrl}/api/v1${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

const credits = async (key: string) => ((await get(sys.baseUrl, '/api/v1/usage', key)).body as Json).credits.monthly_remaining as number;

describe('REST', () => {
  it('answers words and speakers, stores them, reads words only when asked, and names the speakers', async () => {
    const { key } = await sys.newUser('tl-rest@example.com');
    const res = await multipart(
      key,
      '/transcribe',
      [
        ['words', 'true'],
        ['diarize', 'true'],
        ['keyterms', 'budget'],
        ['keyterms', 'marketing team'],
        ['language', 'auto'],
        ['save', 'true'],
      ],
      conversation,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ language: 'en', language_confidence: null, speakers: [{ id: 'S1', name: null }, { id: 'S2', name: null }] });
    expect(res.body.words.length).toBeGreaterThan(10);
    expect(new Set(res.body.words.map((w: Json) => w.speaker))).toEqual(new Set(['S1', 'S2']));
    expect(res.body.segments.every((s: Json) => s.speaker === 'S1' || s.speaker === 'S2')).toBe(true);
    const id = res.body.recording_id as string;

    const plain = (await get(sys.baseUrl, `/api/v1/recordings/${id}`, key)).body as Json;
    expect(plain.transcript.words).toBeUndefined();
    expect(plain.transcript.word_count).toBe(res.body.words.length);
    expect(plain.transcript.speakers).toEqual([{ id: 'S1', name: null }, { id: 'S2', name: null }]);
    const full = (await get(sys.baseUrl, `/api/v1/recordings/${id}?words=true`, key)).body as Json;
    expect(full.transcript.words).toEqual(res.body.words);
    expect((await get(sys.baseUrl, `/api/v1/recordings/${id}?words=yes`, key)).status).toBe(400);

    const named = await postJson(key, `/recordings/${id}/speakers`, { names: { S1: 'Maria', S2: 'Ken' } });
    expect(named.status).toBe(200);
    expect(named.body.transcript.speakers).toEqual([{ id: 'S1', name: 'Maria' }, { id: 'S2', name: 'Ken' }]);
    const unknown = await postJson(key, `/recordings/${id}/speakers`, { names: { S9: 'Ana' } });
    expect({ status: unknown.status, param: unknown.body.error.param }).toEqual({ status: 400, param: 'names.S9' });
    const badId = await postJson(key, `/recordings/${id}/speakers`, { names: { maria: 'Ana' } });
    expect(badId.status).toBe(400);
    const other = await sys.newUser('tl-rest-other@example.com');
    expect((await postJson(other.key, `/recordings/${id}/speakers`, { names: { S1: 'Eve' } })).status).toBe(404);
    expect(((await get(sys.baseUrl, `/api/v1/recordings/${id}`, key)).body as Json).transcript.speakers[0].name).toBe('Maria');

    // Conversions see who said what: owners are the speakers' names or "Speaker N", never the generic "Speaker".
    const items = await postJson(key, '/convert', { recording_id: id, kind: 'action_items' });
    expect(items.status).toBe(200);
    for (const item of items.body.data?.items ?? []) expect(item.owner).not.toBe('Speaker');
  }, 120_000);

  it('cuts SRT and VTT captions on words with speaker labels', async () => {
    const { key } = await sys.newUser('tl-captions@example.com');
    const srt = await multipart(key, '/transcribe', [['diarize', 'true'], ['response_format', 'srt']], conversation);
    expect(srt.status).toBe(200);
    const cues = srt.text.trim().split(/\n\n/);
    expect(cues.length).toBeGreaterThan(2);
    for (const cue of cues) {
      const [n, timing, ...lines] = cue.split('\n');
      expect(n).toMatch(/^\d+$/);
      expect(timing).toMatch(/^\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}$/);
      expect(lines.length).toBeGreaterThanOrEqual(1);
      expect(lines.length).toBeLessThanOrEqual(2);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(42);
    }
    expect(srt.text).toMatch(/^1\n.*\nS1: /);
    expect(srt.text).toMatch(/\nS2: /);
    const vtt = await multipart(key, '/transcribe', [['diarize', 'true'], ['response_format', 'vtt']], conversation);
    expect(vtt.text).toMatch(/^WEBVTT\n/);
    expect(vtt.text).toContain('<v S2>');
  }, 120_000);

  it('runs a job with words and redaction: the result, its words on request, nothing of the number anywhere', async () => {
    const { key } = await sys.newUser('tl-job@example.com');
    const submitted = await postJson(key, '/transcriptions', {
      audio_base64: phone.toString('base64'),
      words: true,
      redact_pii: true,
      redact_pii_policies: ['phone_number', 'email_address'],
      redact_pii_sub: 'numbered_entity_name',
      save: true,
    });
    expect(submitted.status).toBe(202);
    let job: Json = submitted.body;
    for (let i = 0; i < 600 && !['completed', 'failed', 'canceled'].includes(job.status); i++) {
      await new Promise((r) => setTimeout(r, 100));
      job = (await get(sys.baseUrl, `/api/v1/transcriptions/${job.id}`, key)).body as Json;
    }
    expect(job.status).toBe('completed');
    expect(job.words).toBeUndefined();
    expect(job.text).toContain('[PHONE_NUMBER_1]');
    const withWords = (await get(sys.baseUrl, `/api/v1/transcriptions/${job.id}?words=true`, key)).body as Json;
    expect(withWords.words.map((w: Json) => w.text)).toContain('[PHONE_NUMBER_1]');
    const recording = (await get(sys.baseUrl, `/api/v1/recordings/${job.recording_id}?words=true`, key)).body as Json;
    const everything = JSON.stringify([job, withWords, recording]);
    expect(everything).not.toMatch(/five/);
    // The job kept no chunk transcript (a redacted job stores no original text, even for a while).
    const chunks = await sys.transcriptionDb!.query<{ result: unknown }>('SELECT result FROM job_chunks WHERE job_id = $1', [job.id]);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.every((c) => c.result === null)).toBe(true);
  }, 120_000);

  it.each<[string, Array<[string, string]>, string]>([
    ['an unknown redaction policy', [['redact_pii', 'true'], ['redact_pii_policies', 'passport']], 'redact_pii_policies'],
    ['speakers without diarize', [['speakers_expected', '2']], 'speakers_expected'],
    ['too many speakers', [['diarize', 'true'], ['speakers_expected', '11']], 'speakers_expected'],
    ['a key term pocketsphinx cannot know', [['keyterms', 'Murmurly']], 'keyterms'],
    ['a non-boolean words', [['words', 'maybe']], 'words'],
    ['a language that is not a code', [['language', 'automatic']], 'language'],
  ])('refuses %s with a 400 naming it, and charges nothing', async (_name, fields, param) => {
    const { key } = await sys.newUser(`tl-refuse-${param}-${Math.random().toString(36).slice(2)}@example.com`);
    const before = await credits(key);
    const res = await multipart(key, '/transcribe', fields, phone);
    expect({ status: res.status, code: res.body.error?.code, param: res.body.error?.param }).toEqual({ status: 400, code: 'invalid_request', param });
    expect(await credits(key)).toBe(before);
  });

  it('applies timeline options sent after the file (curl -F order), and refuses a bad one there before charging', async () => {
    const { key } = await sys.newUser('tl-after-file@example.com');
    const form = new FormData();
    form.append('audio', new Blob([phone], { type: 'audio/wav' }), 'phone.wav');
    form.append('words', 'true');
    form.append('redact_pii', 'true');
    form.append('redact_pii_policies', 'phone_number');
    const res = await fetch(`${sys.baseUrl}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const body = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(body.text).toContain('[PHONE_NUMBER]');
    expect(body.words.map((w: Json) => w.text)).toContain('[PHONE_NUMBER]');
    const before = await credits(key);
    const bad = new FormData();
    bad.append('audio', new Blob([phone], { type: 'audio/wav' }), 'phone.wav');
    bad.append('redact_pii', 'true');
    bad.append('redact_pii_policies', 'passport');
    const refused = await fetch(`${sys.baseUrl}/api/v1/transcribe`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: bad });
    expect({ status: refused.status, param: ((await refused.json()) as Json).error?.param }).toEqual({ status: 400, param: 'redact_pii_policies' });
    expect(await credits(key)).toBe(before);
  }, 120_000);

  it('refuses a JSON list option that is not a list of strings', async () => {
    const { key } = await sys.newUser('tl-json-lists@example.com');
    const res = await postJson(key, '/transcribe', { keyterms: [{ term: 'x' }], audio_base64: phone.toString('base64') });
    expect({ status: res.status, param: res.body.error?.param }).toEqual({ status: 400, param: 'keyterms' });
  });
});

describe.each(MCP_REVISIONS)('MCP on %s', (revision) => {
  it('transcribes with words and speakers, and get_recording answers them, each result matching its output schema', async () => {
    const { key } = await sys.newUser(`tl-mcp-${revision}@example.com`);
    const client = await connectMcpAt(revision, sys.baseUrl, key);
    try {
      const validators = await outputValidators(client);
      const res = await callTool(client, 'transcribe', { audio_base64: conversation.toString('base64'), words: true, diarize: true, save: true });
      expect(res.isError).toBe(false);
      expectValidOutput(validators, 'transcribe', res.data);
      expect(res.data.speakers.map((s: Json) => s.id)).toEqual(['S1', 'S2']);
      expect(res.data.words.length).toBeGreaterThan(10);
      const plain = await callTool(client, 'get_recording', { recording_id: res.data.recording_id });
      expectValidOutput(validators, 'get_recording', plain.data);
      expect(plain.data.transcript.words).toBeUndefined();
      const full = await callTool(client, 'get_recording', { recording_id: res.data.recording_id, words: true });
      expectValidOutput(validators, 'get_recording', full.data);
      expect(full.data.transcript.words).toEqual(res.data.words);
      const refused = await callTool(client, 'transcribe', { audio_base64: conversation.toString('base64'), redact_pii: true, redact_pii_policies: ['passport'] });
      expect(refused.isError).toBe(true);
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe('a recording as text and captions', () => {
  it('labels speaker turns with their names in text, SRT and VTT; refuses a recording without a transcript', async () => {
    const { key } = await sys.newUser('tl-renderings@example.com');
    const made = await multipart(key, '/transcribe', [['diarize', 'true'], ['save', 'true']], conversation);
    const id = made.body.recording_id as string;
    await postJson(key, `/recordings/${id}/speakers`, { names: { S1: 'Maria', S2: 'Ken <CFO>' } });
    const text = await fetch(`${sys.baseUrl}/api/v1/recordings/${id}?response_format=text`, { headers: { authorization: `Bearer ${key}` } });
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    const lines = (await text.text()).split('\n');
    expect(lines.map((l) => l.split(':')[0])).toEqual(['Maria', 'Ken <CFO>', 'Maria']);
    const srt = await (await fetch(`${sys.baseUrl}/api/v1/recordings/${id}?response_format=srt`, { headers: { authorization: `Bearer ${key}` } })).text();
    expect(srt).toMatch(/^1\n.*\nMaria: /);
    expect(srt).toContain('Ken <CFO>: ');
    const vtt = await (await fetch(`${sys.baseUrl}/api/v1/recordings/${id}?response_format=vtt`, { headers: { authorization: `Bearer ${key}` } })).text();
    expect(vtt).toContain('<v Ken &lt;CFO&gt;>');
    expect((await get(sys.baseUrl, `/api/v1/recordings/${id}?response_format=docx`, key)).status).toBe(400);
  }, 120_000);
});
