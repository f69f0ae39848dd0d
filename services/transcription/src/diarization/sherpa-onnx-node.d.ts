/**
 * The part of `sherpa-onnx-node` (1.13.8, no type declarations of its own) that the service
 * uses: OfflineSpeakerDiarization and the addon's asynchronous run for diarization, as its
 * lib/non-streaming-speaker-diarization.js and src/non-streaming-speaker-diarization.cc define
 * them, and the voice activity detector of live streams (lib/vad.js).
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

  // The voice activity detector (lib/vad.js, src/vad.cc), which live/silero-vad.ts uses.
  export interface SileroVadModelConfig {
    model: string;
    /** Speech probability above which a window is speech (default 0.5). */
    threshold?: number;
    /** Silence that ends a segment, seconds. */
    minSilenceDuration?: number;
    /** Speech shorter than this is not a segment, seconds. */
    minSpeechDuration?: number;
    /** Samples per model run: 512 at 16 kHz for Silero v5. */
    windowSize?: number;
    /** Past this, the detector raises its threshold to end the segment, seconds. */
    maxSpeechDuration?: number;
  }

  export interface VadConfig {
    sileroVad: SileroVadModelConfig;
    sampleRate?: number;
    numThreads?: number;
    provider?: string;
    debug?: boolean | number;
  }

  /** A finished segment: `start` in samples since the detector was created or reset. */
  export interface SpeechSegment {
    start: number;
    samples: Float32Array;
  }

  /**
   * Loads the model in its constructor, synchronously. A file that is not an ONNX model aborts
   * the whole process (ONNX Runtime's exception is not caught by the addon).
   */
  export class Vad {
    constructor(config: VadConfig, bufferSizeInSeconds: number);
    acceptWaveform(samples: Float32Array): void;
    /** True while in speech (from the first speech window until the segment ends). */
    isDetected(): boolean;
    /** No finished segment waiting. */
    isEmpty(): boolean;
    /** The oldest finished segment (a copy, with `enableExternalBuffer` false). */
    front(enableExternalBuffer?: boolean): SpeechSegment;
    pop(): void;
    clear(): void;
    /** Forgets everything: state, buffered audio, segments; sample counting starts again at 0. */
    reset(): void;
    flush(): void;
  }

  const sherpa: { OfflineSpeakerDiarization: typeof OfflineSpeakerDiarization; Vad: typeof Vad };
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

