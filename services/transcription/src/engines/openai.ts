/**
 * Any OpenAI-compatible speech-to-text endpoint (OpenAI, Groq, a local whisper.cpp or
 * faster-whisper server): one `POST {base}/v1/audio/transcriptions` per chunk, multipart with
 * the chunk as WAV, `model`, `response_format=verbose_json` and `language` when given. A
 * non-2xx answer, a timeout or a body that is not the documented JSON is an engine failure;
 * 429 and 5xx answers and network errors are retried (`retries`, default 1) after a short pause.
 */
import { openAsBlob } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TimedSegment } from '../stitch';
import { openAiCapabilities } from './capabilities';
import { EngineError, type Recognition, type RecognizeOptions, type SpeechEngine } from './engine';
import { windowedStartLive, type WindowedLiveOptions } from '../live/windowed-recognizer';

export interface OpenAiEngineOptions {
  /** e.g. "https://api.openai.com" or "http://127.0.0.1:8000/v1" (a trailing /v1 is not doubled). */
  baseUrl: string;
  /** Sent as a bearer token when set (local servers often need none). */
  apiKey?: string;
  /** e.g. "whisper-1". */
  model: string;
  /** Per-request timeout in milliseconds (default 300,000). */
  timeoutMs?: number;
  /** Extra attempts after a 429/5xx answer or a network error (default 1). */
  retries?: number;
  /** Pause before a retry in milliseconds (default 500). */
  retryDelayMs?: number;
  /**
   * The server gives word times (`timestamp_granularities[]=word`, as whisper-1 does; default
   * true). Set false for a server without them: asking for words is then refused up front.
   */
  words?: boolean;
  /**
   * Live streams on sliding windows (live/windowed-recognizer.ts). Partials are off unless
   * `partialMs` is set: each would be a request for up to 15 s of audio, paid for by the second
   * at OpenAI, so a stream gets its finals only.
   */
  live?: WindowedLiveOptions;
}

/** The endpoint for `baseUrl`, accepting bases with or without the trailing `/v1`. */
export function transcriptionsUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return `${base.endsWith('/v1') ? base : `${base}/v1`}/audio/transcriptions`;
}

const LANGUAGE_CODES = [
  'af', 'ar', 'hy', 'az', 'be', 'bs', 'bg', 'ca', 'zh', 'hr', 'cs', 'da', 'nl', 'en', 'et', 'fi', 'fr', 'gl', 'de', 'el',
  'he', 'hi', 'hu', 'is', 'id', 'it', 'ja', 'kn', 'kk', 'ko', 'lv', 'lt', 'mk', 'ms', 'mr', 'mi', 'ne', 'no', 'fa', 'pl',
  'pt', 'ro', 'ru', 'sr', 'sk', 'sl', 'es', 'sw', 'sv', 'tl', 'ta', 'th', 'tr', 'uk', 'ur', 'vi', 'cy',
];
let namesToCodes: Map<string, string> | undefined;

/** verbose_json reports languages by English name ("english"); the API answers ISO 639-1 codes. */
export function languageCode(reported: string): string | undefined {
  const value = reported.trim().toLowerCase();
  if (!value) return undefined;
  if (/^[a-z]{2,3}([-_][a-z0-9]+)*$/.test(value) && value.length <= 3) return value;
  if (!namesToCodes) {
    const names = new Intl.DisplayNames(['en'], { type: 'language' });
    namesToCodes = new Map(LANGUAGE_CODES.map((code) => [(names.of(code) ?? code).toLowerCase(), code]));
  }
  return namesToCodes.get(value);
}

/** verbose_json's `words` ([{word, start, end}]), checked; absent → undefined. */
function parseWords(words: unknown): Recognition['words'] {
  if (words === undefined || words === null) return undefined;
  if (!Array.isArray(words)) throw new EngineError('the transcription endpoint answered "words" that is not a list');
  return (words as Array<{ word?: unknown; start?: unknown; end?: unknown }>).flatMap((w) => {
    if (!w || typeof w.word !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number') {
      throw new EngineError('the transcription endpoint answered a word without a string and numeric start/end');
    }
    const text = w.word.trim();
    return text ? [{ text, start: w.start, end: Math.max(w.start, w.end), confidence: null }] : [];
  });
}

/** Checks the verbose_json body; anything else is an engine failure. */
export function parseVerboseJson(body: unknown): Recognition {
  const b = body as { text?: unknown; language?: unknown; segments?: unknown; words?: unknown };
  if (!b || typeof b !== 'object' || typeof b.text !== 'string') throw new EngineError('the transcription endpoint answered JSON without a "text" string');
  const segments: TimedSegment[] = [];
  if (b.segments !== undefined && b.segments !== null) {
    if (!Array.isArray(b.segments)) throw new EngineError('the transcription endpoint answered "segments" that is not a list');
    for (const s of b.segments as Array<{ start?: unknown; end?: unknown; text?: unknown }>) {
      if (!s || typeof s.start !== 'number' || typeof s.end !== 'number' || typeof s.text !== 'string') {
        throw new EngineError('the transcription endpoint answered a segment without numeric start/end and text');
      }
      segments.push({ start: s.start, end: s.end, text: s.text.trim() });
    }
  }
  const language = typeof b.language === 'string' ? languageCode(b.language) : undefined;
  const words = parseWords(b.words);
  return { text: b.text.trim(), segments, ...(words ? { words } : {}), ...(language ? { language } : {}) };
}

const retryable = (status: number) => status === 429 || status >= 500;

/** Creates the engine; nothing is contacted until the first chunk. */
export function createOpenAiEngine(opts: OpenAiEngineOptions): SpeechEngine {
  const url = transcriptionsUrl(opts.baseUrl);
  const timeoutMs = opts.timeoutMs ?? 300_000;
  const retries = opts.retries ?? 1;
  const retryDelayMs = opts.retryDelayMs ?? 500;

  const wantWords = opts.words ?? true;
  const attempt = async (wavPath: string, { language, signal, keyterms }: RecognizeOptions): Promise<{ retry: boolean; error?: EngineError; value?: Recognition }> => {
    const form = new FormData();
    form.append('file', await openAsBlob(wavPath, { type: 'audio/wav' }), 'audio.wav');
    form.append('model', opts.model);
    form.append('response_format', 'verbose_json');
    if (language) form.append('language', (language.split(/[-_]/)[0] ?? language).toLowerCase());
    if (wantWords) {
      form.append('timestamp_granularities[]', 'word');
      form.append('timestamp_granularities[]', 'segment');
    }
    if (keyterms && keyterms.length > 0) form.append('prompt', keyterms.join(', '));
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        body: form,
        headers: opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {},
        signal: AbortSignal.any([signal, timeout]),
      });
    } catch (err) {
      signal.throwIfAborted();
      if (timeout.aborted) return { retry: false, error: new EngineError(`the transcription endpoint did not answer within ${timeoutMs} ms`) };
      return { retry: true, error: new EngineError(`the transcription endpoint could not be reached: ${(err as Error).message}`, { cause: err }) };
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      signal.throwIfAborted();
      const why = timeout.aborted ? `did not finish its answer within ${timeoutMs} ms` : `broke off its answer: ${(err as Error).message}`;
      return { retry: !timeout.aborted, error: new EngineError(`the transcription endpoint ${why}`) };
    }
    if (!res.ok) {
      return { retry: retryable(res.status), error: new EngineError(`the transcription endpoint answered HTTP ${res.status}`) };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { retry: false, error: new EngineError('the transcription endpoint answered a body that is not JSON') };
    }
    return { retry: false, value: parseVerboseJson(body) };
  };

  const recognize: SpeechEngine['recognize'] = async (wavPath, options) => {
    for (let n = 0; ; n++) {
      options.signal.throwIfAborted();
      const outcome = await attempt(wavPath, options);
      if (outcome.value) return outcome.value;
      if (!outcome.retry || n >= retries) throw outcome.error ?? new EngineError('the transcription endpoint failed');
      await sleep(retryDelayMs * (n + 1), undefined, { signal: options.signal });
    }
  };
  return {
    name: 'openai',
    model: opts.model,
    capabilities: openAiCapabilities(wantWords),
    recognize,
    startLive: windowedStartLive({ name: 'openai', recognize }, { partialMs: 0, ...opts.live }),
  };
}
