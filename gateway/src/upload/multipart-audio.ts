/**
 * The multipart/form-data body of POST /transcribe, read with busboy as it arrives: text fields
 * are options, the one file part `audio` is handed on chunk by chunk. The audio only ends once
 * the whole form has been read, so a bad field after the file still fails it. Text fields must
 * be UTF-8: busboy replaces bytes that are not with U+FFFD, so a field holding U+FFFD is refused
 * naming it (a literal U+FFFD too: busboy leaves no way to tell the two apart for a part that
 * declares its own charset).
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import { MurmurError, invalidParam } from '@murmur/contract';
import { UploadFieldSet, isOptionName, optionFromText } from './upload-fields';
import type { UploadStream } from './upload-stream';

export const AUDIO_PART = 'audio';
/** Longest text field accepted; options are short. */
export const MAX_FIELD_BYTES = 16 * 1024;
const MAX_PARTS = 16;
const REPLACEMENT_CHARACTER = '\uFFFD';

/** Starts reading `req` into `upload`. Throws `invalid_request` when the header has no boundary. */
export function readMultipart(req: IncomingMessage, upload: UploadStream): void {
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      defParamCharset: 'utf8', // file names as curl and browsers send them
      limits: { fieldSize: MAX_FIELD_BYTES, fieldNameSize: 200, parts: MAX_PARTS, headerPairs: 32 },
    });
  } catch {
    throw new MurmurError('invalid_request', 'The multipart/form-data Content-Type has no boundary.', { param: null });
  }
  const options = new UploadFieldSet(AUDIO_PART);
  let file: Readable | null = null;
  let filename = AUDIO_PART;
  let contentType = 'application/octet-stream';

  upload.attach({
    describe: () => ({ fields: options.fields, languageKnown: options.languageKnown, filename, contentType }),
    pull: () => file?.resume(),
    stop: (failed) => {
      if (!failed) return;
      req.unpipe(parser);
      req.pause();
      // Not from inside busboy's own write: let it unwind first.
      process.nextTick(() => parser.destroy());
    },
  });

  const guard = (run: () => void) => {
    if (upload.settled) return;
    try {
      run();
    } catch (err) {
      upload.fail(err);
    }
  };

  parser.on('field', (name, value, info) =>
    guard(() => {
      if (info.valueTruncated) throw invalidParam(name, `\`${name}\` is longer than ${MAX_FIELD_BYTES / 1024} KiB.`);
      // busboy decodes field bytes that are not UTF-8 as U+FFFD, whatever charset a part
      // declares: refused, rather than stored or sent on as other text than the client's.
      if (value.includes(REPLACEMENT_CHARACTER)) {
        throw invalidParam(name, `\`${name}\` is not valid UTF-8 (or holds U+FFFD, what invalid bytes become). Send text fields as UTF-8.`);
      }
      if (name === AUDIO_PART) {
        throw invalidParam(AUDIO_PART, '`audio` must be a file part; with curl, send it as -F audio=@path/to/file.');
      }
      options.set(name, isOptionName(name) ? optionFromText(name, value) : undefined);
    }),
  );
  parser.on('file', (name, stream, info) => {
    stream.on('error', () => {}); // busboy also reports it, below
    guard(() => {
      if (name !== AUDIO_PART) throw invalidParam(name, `Only \`audio\` may be a file; \`${name}\` must be a text field.`);
      if (file) throw invalidParam(AUDIO_PART, 'Send one `audio` file per request.');
      file = stream;
      filename = info.filename || AUDIO_PART;
      contentType = info.mimeType || contentType;
      stream.on('data', (chunk: Buffer) =>
        guard(() => {
          if (!upload.push(chunk)) stream.pause();
        }),
      );
    });
  });
  parser.on('partsLimit', () =>
    guard(() => {
      throw new MurmurError('invalid_request', `The form has more than ${MAX_PARTS} parts.`, { param: null });
    }),
  );
  parser.on('error', () =>
    guard(() => {
      throw new MurmurError('invalid_request', 'The multipart/form-data body is malformed or ends too early.', { param: null });
    }),
  );
  parser.on('finish', () =>
    guard(() => {
      if (!file && options.fields.audio_url === undefined) throw new MurmurError('missing_audio', undefined, { param: AUDIO_PART });
      upload.finish();
    }),
  );
  req.pipe(parser);
}
