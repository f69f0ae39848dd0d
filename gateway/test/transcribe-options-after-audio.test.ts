/**
 * Issue 11 item 7: multipart fields and JSON members in any order (`curl -F audio=@x -F
 * response_format=srt`). Options after the audio are applied after recognition; a `language`
 * after it restarts the transcription from the gateway's spool with that language (pocketsphinx
 * refuses "de", which shows the late language reached the engine). Spool files are removed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FORM_TYPE, SPEECH_WAV, creditsOf, formBody, rawPost, type FormPart } from './support/ai-calls';
import { startSystem, type TestSystem } from './support/system';

describe('POST /transcribe with options after the audio', () => {
  let sys: TestSystem;
  let key: string;
  let userId: string;
  const speech = readFileSync(SPEECH_WAV);
  const audio: FormPart = { name: 'audio', file: speech };
  const tmp = mkdtempSync(path.join(tmpdir(), 'murmur-order-test-'));

  beforeAll(async () => {
    sys = await startSystem({ ai: true, tmpDir: tmp });
    const u = await sys.newUser('order@example.com');
    key = u.key;
    userId = u.user.id;
  });
  afterAll(async () => {
    await sys.stop();
    rmSync(tmp, { recursive: true, force: true });
  });
  afterEach(() => {
    // The transcription service's files and the gateway's spool are gone once answered.
    expect(readdirSync(tmp)).toEqual([]);
  });

  const form = (parts: FormPart[]) => rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': FORM_TYPE }, [formBody(parts)]);
  const json = (body: string) => rawPost(sys.baseUrl, '/api/v1/transcribe', key, { 'content-type': 'application/json' }, [body]);

  it('applies response_format after the file (curl -F audio=@x -F response_format=srt)', async () => {
    const res = await form([audio, { name: 'response_format', value: 'srt' }]);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/x-subrip');
    expect(res.text).toMatch(/^1\n\d\d:\d\d:\d\d,\d{3} --> /);
  });

  it('saves with save, title and folder_id after the file', async () => {
    const { folder } = await sys.admin.library.createFolder({ ownerId: userId, name: 'Late', createdAt: undefined });
    const res = await form([audio, { name: 'save', value: 'true' }, { name: 'title', value: 'Late options' }, { name: 'folder_id', value: folder!.id }]);
    expect(res.status).toBe(200);
    const { recording } = await sys.admin.library.getRecording({ ownerId: userId, recordingId: res.body.recording_id });
    expect(recording).toMatchObject({ title: 'Late options', folderId: folder!.id });
  });

  it('applies a language after the audio, in JSON too: a language the engine refuses is refused, nothing charged', async () => {
    const before = await creditsOf(sys, userId);
    const res = await json(`{"audio_base64":"${speech.toString('base64')}","language":"de"}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'language' });
    expect(res.body.error.message).toContain('does not recognise language "de"');
    expect(await creditsOf(sys, userId)).toEqual(before);
  });

  it('transcribes once with a language after the file, charging once', async () => {
    const before = await creditsOf(sys, userId);
    const res = await form([audio, { name: 'language', value: 'en' }, { name: 'response_format', value: 'json' }]);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'transcription', language: 'en' });
    const after = await creditsOf(sys, userId);
    expect(after.creditsUsed).toBe(before.creditsUsed + res.body.credits_charged);
    expect(after.ledger.filter((e) => e.startsWith('reserve')).length).toBe(before.ledger.filter((e) => e.startsWith('reserve')).length + 1);
  });

  it('fingerprints the same parameters in any order: a reordered retry is replayed', async () => {
    const headers = { 'content-type': FORM_TYPE, 'idempotency-key': 'order-1' };
    const first = await rawPost(sys.baseUrl, '/api/v1/transcribe', key, headers, [formBody([{ name: 'response_format', value: 'text' }, audio])]);
    const again = await rawPost(sys.baseUrl, '/api/v1/transcribe', key, headers, [formBody([audio, { name: 'response_format', value: 'text' }])]);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
  });
});
