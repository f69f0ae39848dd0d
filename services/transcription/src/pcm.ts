/**
 * The one audio format inside the service: 16 kHz, mono, signed 16-bit little-endian PCM
 * (what ffmpeg decodes every upload to and what every engine is given, as WAV).
 */

export const SAMPLE_RATE = 16_000;
export const BYTES_PER_SAMPLE = 2;
/** 32,000: PCM bytes per second of audio, so duration = bytes / BYTES_PER_SECOND. */
export const BYTES_PER_SECOND = SAMPLE_RATE * BYTES_PER_SAMPLE;
export const WAV_HEADER_BYTES = 44;

/** Seconds of audio in `bytes` of PCM. */
export function pcmSeconds(bytes: number): number {
  return bytes / BYTES_PER_SECOND;
}

/** The canonical 44-byte RIFF/WAVE header of `dataBytes` of 16 kHz mono s16le PCM. */
export function wavHeader(dataBytes: number): Buffer {
  const h = Buffer.alloc(WAV_HEADER_BYTES);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(SAMPLE_RATE, 24);
  h.writeUInt32LE(BYTES_PER_SECOND, 28);
  h.writeUInt16LE(BYTES_PER_SAMPLE, 32); // block align
  h.writeUInt16LE(16, 34); // bits per sample
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}
