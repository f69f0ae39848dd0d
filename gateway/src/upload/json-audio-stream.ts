/**
 * The JSON body of POST /transcribe — `{"language": "en", …, "audio_base64": "…"}` — read as it
 * arrives: options are collected (64 KiB of them at most), and the decoded bytes of
 * `audio_base64` are handed to `onAudio` while the string is still being received. Nothing
 * else of the body is kept. Options may come before or after `audio_base64` (upload-fields.ts).
 *
 * Strict JSON everywhere but inside `audio_base64`, where raw line breaks and tabs (a common
 * result of pasting wrapped `base64` output into a template) are tolerated like MIME
 * whitespace; every other raw control character there is refused as invalid base64. Bytes that
 * are not UTF-8 are refused naming the option they are in (json-tokenizer.ts).
 */
import type { IncomingMessage } from 'node:http';
import { MurmurError, invalidParam } from '@murmur/contract';
import { Base64Decoder } from './base64-decoder';
import { JsonTokenizer, type JsonScalar } from '../http/json-tokenizer';
import { UploadFieldSet, isListOption, isOptionName, optionFromJson, type AudioUploadFields } from './upload-fields';
import type { UploadStream } from './upload-stream';

export const AUDIO_BASE64 = 'audio_base64';
/** Cap on the body outside `audio_base64`: keys, options, punctuation and whitespace. */
export const MAX_JSON_OPTIONS_CHARS = 64 * 1024;

export interface JsonAudioParserOptions {
  /** Receives decoded audio in order; may throw (e.g. over the size limit) to stop parsing. */
  onAudio(bytes: Buffer): void;
}

/** Push parser for the JSON body; `write` and `end` throw MurmurError on bad input. */
export class JsonAudioParser {
  private readonly options = new UploadFieldSet(AUDIO_BASE64);
  private readonly tokenizer: JsonTokenizer;
  private decoder: Base64Decoder | null = null;
  private audioSeen = false;
  private received = 0;

  constructor(private readonly opts: JsonAudioParserOptions) {
    this.tokenizer = new JsonTokenizer(
      {
        member: (key, value, path) => this.member(key, value, path),
        streamStart: () => this.startAudio(),
        streamText: (_key, text) => this.audio(this.decoderOf().write(text)),
        streamEnd: () => this.audio(this.decoderOf().end()),
      },
      // Depth 2: the list options are arrays of strings (anything else nested is refused in member).
      { streams: (path) => path.length === 1 && path[0] === AUDIO_BASE64, maxHeldChars: MAX_JSON_OPTIONS_CHARS, maxDepth: 2, objectRoot: true },
    );
  }

  /** The options read so far (all of them once the body has ended). */
  get fields(): AudioUploadFields {
    return this.options.fields;
  }

  /** Whether `language` has been read. */
  get languageKnown(): boolean {
    return this.options.languageKnown;
  }

  /** The media type of a `data:` prefix, if the value had one. */
  get mediaType(): string | undefined {
    return this.decoder?.mediaType;
  }

  write(chunk: Buffer): void {
    this.received += chunk.length;
    this.tokenizer.write(chunk);
  }

  /** Ends the body; throws `missing_audio` when it was empty or had neither an `audio_base64` string nor an `audio_url`. */
  end(): void {
    if (this.received === 0) throw new MurmurError('missing_audio', undefined, { param: AUDIO_BASE64 });
    this.tokenizer.end();
    if (!this.decoder && this.fields.audio_url === undefined) throw new MurmurError('missing_audio', undefined, { param: AUDIO_BASE64 });
  }

  private member(key: string, value: JsonScalar, path: readonly string[]): void {
    if (path.length > 1) {
      // An entry of an array: only the list options are arrays, and only of strings.
      const list = path[0]!;
      if (!isListOption(list) || !/^\d+$/.test(key)) throw invalidParam(list.slice(0, 64), `\`${list.slice(0, 64)}\` must be a single value, not an object or array.`);
      if (typeof value !== 'string') throw invalidParam(list, `\`${list}\` must be a list of strings.`);
      this.options.set(list, value);
      return;
    }
    if (key === AUDIO_BASE64) {
      this.markAudio();
      if (value !== null) throw invalidParam(AUDIO_BASE64, '`audio_base64` must be a string of base64 text.');
      return;
    }
    this.options.set(key, isOptionName(key) ? optionFromJson(key, value) : undefined);
  }

  private startAudio(): void {
    this.markAudio();
    this.decoder = new Base64Decoder({ param: AUDIO_BASE64 });
  }

  private markAudio(): void {
    if (this.audioSeen) throw invalidParam(AUDIO_BASE64, '`audio_base64` is given more than once.');
    this.audioSeen = true;
  }

  private audio(bytes: Buffer): void {
    if (bytes.length > 0) this.opts.onAudio(bytes);
  }

  private decoderOf(): Base64Decoder {
    if (!this.decoder) throw new Error('JsonAudioParser: audio text before its start');
    return this.decoder;
  }
}

/** Starts reading the JSON body of `req` into `upload`, pausing `req` while the consumer is behind. */
export function readJson(req: IncomingMessage, upload: UploadStream): void {
  const parser = new JsonAudioParser({
    onAudio: (bytes) => {
      if (!upload.push(bytes)) req.pause();
    },
  });
  const onData = (chunk: Buffer) => {
    if (upload.settled) return;
    try {
      parser.write(chunk);
    } catch (err) {
      upload.fail(err);
    }
  };
  const onEnd = () => {
    if (upload.settled) return;
    try {
      parser.end();
      upload.finish();
    } catch (err) {
      upload.fail(err);
    }
  };
  upload.attach({
    describe: () => ({ fields: parser.fields, languageKnown: parser.languageKnown, filename: 'audio', contentType: parser.mediaType ?? 'application/octet-stream' }),
    pull: () => req.resume(),
    stop: () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.pause();
    },
  });
  req.on('data', onData);
  req.on('end', onEnd);
}
