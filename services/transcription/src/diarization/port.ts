/**
 * Diarization as the service uses it: what is missing (checked on every call that asks, before
 * anything is held, so models fetched while the service runs are picked up), and who spoke when
 * in a call's decoded PCM. The diarizer (a child process) starts on the first call that needs it.
 */
import { readFile } from 'node:fs/promises';
import { createDiarizer, type Diarizer, type DiarizerOptions, type SpeakerTurn } from './diarizer';
import { diarizationModelsOf } from './models';

export interface DiarizationPort {
  /** The model files that are missing (empty when diarization can run). */
  missing(): string[];
  /** Who speaks when in `pcmFile` (16 kHz mono s16le). */
  diarize(pcmFile: string, opts: { speakersExpected: number; signal: AbortSignal }): Promise<SpeakerTurn[]>;
  close(): Promise<void>;
}

/** s16le bytes → samples in [-1, 1]. */
export function pcmToFloat(pcm: Buffer): Float32Array {
  const samples = new Float32Array(Math.floor(pcm.length / 2));
  for (let i = 0; i < samples.length; i++) samples[i] = pcm.readInt16LE(i * 2) / 32768;
  return samples;
}

export function diarizationPort(modelsDir: string, options: DiarizerOptions = {}): DiarizationPort {
  let diarizer: Promise<Diarizer> | undefined;
  const current = (): Promise<Diarizer> => {
    const models = diarizationModelsOf(modelsDir);
    if ('missing' in models) throw new Error(`diarization models missing: ${models.missing.join(', ')}`);
    if (!diarizer) {
      diarizer = createDiarizer(models, options);
      // A diarizer that failed to start (a damaged file) is tried again on the next call.
      diarizer.catch(() => (diarizer = undefined));
    }
    return diarizer;
  };
  return {
    missing() {
      const models = diarizationModelsOf(modelsDir);
      return 'missing' in models ? models.missing : [];
    },
    async diarize(pcmFile, { speakersExpected, signal }) {
      const d = await current();
      const samples = pcmToFloat(await readFile(pcmFile));
      return d.diarize(samples, { signal, ...(speakersExpected > 0 ? { speakersExpected } : {}) });
    },
    async close() {
      const d = await diarizer?.catch(() => undefined);
      await d?.close();
    },
  };
}
