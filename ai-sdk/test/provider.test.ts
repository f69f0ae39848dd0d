/**
 * @murmur/ai-sdk through the AI SDK's own `transcribe` (the `ai` package) against a real Murmur:
 * bytes uploaded, a URL handed to Murmur to download, word timings when asked, Murmur's options
 * under providerOptions.murmur, and Murmur's typed errors coming through.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { transcribe } from 'ai';
import { createMurmur } from '@murmur/ai-sdk';
import { AuthenticationError } from '@murmur/sdk';
import { DEFAULT_AUDIO_URL_POLICY } from '../../gateway/src/upload/fetch-audio';
import { startSystem, type TestSystem } from '../../gateway/test/support/system';

const WAV = '/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav';

describe('the AI SDK transcription provider', () => {
  let sys: TestSystem;
  let audioServer: http.Server;
  let audioPort: number;
  let key: string;

  beforeAll(async () => {
    audioServer = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'audio/wav' });
      fs.createReadStream(WAV).pipe(res);
    });
    await new Promise<void>((resolve) => audioServer.listen(0, '127.0.0.1', resolve));
    audioPort = (audioServer.address() as AddressInfo).port;
    sys = await startSystem({ ai: true, audioUrlPolicy: { ...DEFAULT_AUDIO_URL_POLICY, allowCidrs: ['127.0.0.1/32'], ports: [80, 443, audioPort] } });
    key = (await sys.newUser('ai-sdk@example.com')).key;
  });
  afterAll(async () => {
    await sys?.stop();
    await new Promise<void>((resolve) => audioServer?.close(() => resolve()));
  });

  it('transcribes bytes with segments, words and Murmur’s metadata', async () => {
    const murmur = createMurmur({ apiKey: key, baseURL: sys.baseUrl });
    const result = await transcribe({ model: murmur.transcription('default'), audio: fs.readFileSync(WAV), timestampGranularities: ['word'] });
    expect(result.text.length).toBeGreaterThan(10);
    expect(result.segments.length).toBeGreaterThan(0);
    expect(result.segments[0]).toEqual({ text: expect.any(String), startSecond: expect.any(Number), endSecond: expect.any(Number) });
    expect(result.durationInSeconds).toBeGreaterThan(1);
    expect(result.warnings).toEqual([]);
    const meta = result.providerMetadata?.murmur as { id: string; credits_charged: number };
    expect(meta.id).toMatch(/^trn_/);
    expect(meta.credits_charged).toBeGreaterThan(0);
    expect(result.words?.length).toBeGreaterThan(3);
    expect(result.words![0]).toEqual({ text: expect.any(String), startSecond: expect.any(Number), endSecond: expect.any(Number) });
    expect(result.responses[0]!.modelId).toEqual(expect.any(String));
  });

  it('hands a URL to Murmur to download, and passes its options (save, title)', async () => {
    const murmur = createMurmur({ apiKey: key, baseURL: sys.baseUrl });
    const url = new URL(`http://127.0.0.1:${audioPort}/speech.wav`);
    const result = await transcribe({ model: murmur('default'), audio: url, providerOptions: { murmur: { save: true, title: 'Via the AI SDK', colour: 'blue' } } });
    const meta = result.providerMetadata?.murmur as { recording_id: string };
    expect(meta.recording_id).toMatch(/^rec_/);
    expect(result.warnings).toEqual([{ type: 'unsupported', feature: 'providerOptions.murmur.colour' }]);
    const recording = (await (await fetch(`${sys.baseUrl}/api/v1/recordings/${meta.recording_id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { title: string };
    expect(recording.title).toBe('Via the AI SDK');
  });

  it('lets Murmur’s typed errors through', async () => {
    const murmur = createMurmur({ apiKey: `svc_${'1'.repeat(64)}`, baseURL: sys.baseUrl });
    const err = await transcribe({ model: murmur.transcription(), audio: fs.readFileSync(WAV) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthenticationError);
  });
});
