/**
 * The part of `sherpa-onnx-node` (1.13.8, no type declarations of its own) that diarization
 * uses: OfflineSpeakerDiarization and the addon's asynchronous run, as its
 * lib/non-streaming-speaker-diarization.js and src/non-streaming-speaker-diarization.cc define
 * them.
 */
declare module 'sherpa-onnx-node' {
  export interface FastClusteringConfig {
    /** > 0: exactly this many speakers; otherwise `threshold` decides. */
    numClusters?: number;
    /** Cosine distance (complete linkage) under which two stretches are one speaker. */
    threshold?: number;
  }

  export interface OfflineSpeakerDiarizationConfig {
    segmentation: { pyannote: { model: string }; numThreads?: number; debug?: boolean | number; provider?: string };
    embedding: { model: string; numThreads?: number; debug?: boolean | number; provider?: string };
    clustering?: FastClusteringConfig;
    /** Turns shorter than this are dropped (seconds). */
    minDurationOn?: number;
    /** Gaps shorter than this within one speaker are closed (seconds). */
    minDurationOff?: number;
  }

  export interface SpeakerDiarizationSegment {
    start: number;
    end: number;
    speaker: number;
  }

  export class OfflineSpeakerDiarization {
    constructor(config: OfflineSpeakerDiarizationConfig);
    /** The native object, for the addon's functions. */
    readonly handle: unknown;
    readonly sampleRate: number;
    /** Synchronous: blocks the calling thread for the whole run. */
    process(samples: Float32Array): SpeakerDiarizationSegment[];
    setConfig(config: { clustering: FastClusteringConfig }): void;
  }

  const sherpa: { OfflineSpeakerDiarization: typeof OfflineSpeakerDiarization };
  export default sherpa;
}

declare module 'sherpa-onnx-node/addon.js' {
  import type { SpeakerDiarizationSegment } from 'sherpa-onnx-node';

  const addon: {
    /**
     * Runs on a libuv worker thread (the samples are copied first); `onProgress` gets the
     * embedding chunks done and their total. Cannot be stopped once started.
     */
    offlineSpeakerDiarizationProcessAsync(handle: unknown, samples: Float32Array, onProgress: (done: number, total: number) => void): Promise<SpeakerDiarizationSegment[]>;
  };
  export default addon;
}
