/**
 * The two model files diarization needs, at fixed places under MURMUR_MODELS_DIR, and where
 * `npm run models -- fetch diarization` gets them (sherpa-onnx's GitHub releases, each file
 * pinned by SHA-256):
 *
 * - segmentation: pyannote segmentation-3.0 as exported for sherpa-onnx, in
 *   `sherpa-onnx-pyannote-segmentation-3-0/` (model.int8.onnx, else model.onnx). The release
 *   ships it as a .tar.bz2: the archive is pinned, and so is the file taken out of it.
 * - embedding: 3D-Speaker CAM++ trained on VoxCeleb (English, 512-dimensional, Apache-2.0),
 *   `3dspeaker_speech_campplus_sv_en_voxceleb_16k.onnx`, a plain file in the release.
 *
 * The release assets carry no published digest (GitHub's `digest` is null for them). The
 * SHA-256 values below are those of the release files as downloaded, identical in the
 * published pins of many independent projects; the embedding's also equals the Git LFS oid
 * of the same file in csukuangfj/speaker-embedding-models on Hugging Face.
 */
import { statSync } from 'node:fs';
import * as path from 'node:path';

export interface DiarizationModels {
  /** Absolute paths. */
  segmentation: string;
  embedding: string;
}

export const SEGMENTATION_DIR = 'sherpa-onnx-pyannote-segmentation-3-0';
/** Looked for in this order. */
export const SEGMENTATION_FILES = [`${SEGMENTATION_DIR}/model.int8.onnx`, `${SEGMENTATION_DIR}/model.onnx`] as const;
export const EMBEDDING_FILE = '3dspeaker_speech_campplus_sv_en_voxceleb_16k.onnx';

/** What to tell an operator whose models are missing. */
export const DIARIZATION_FETCH_COMMAND = 'npm run models -- fetch diarization';

const RELEASES = 'https://github.com/k2-fsa/sherpa-onnx/releases/download';

/** A file of the release, as `npm run models` fetches it. */
export interface PinnedDownload {
  url: string;
  bytes: number;
  sha256: string;
  /**
   * For a .tar.bz2: the files taken out of it (name inside the archive → where it goes). The
   * archive's pin covers them; a model's own SHA-256 is checked too.
   */
  extract?: ReadonlyArray<{ entry: string; file: string; sha256?: string }>;
  /** For a plain file: where it goes under MURMUR_MODELS_DIR. */
  file?: string;
  license: string;
}

export const DIARIZATION_DOWNLOADS: readonly PinnedDownload[] = Object.freeze([
  {
    url: `${RELEASES}/speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2`,
    bytes: 6_958_444,
    sha256: '24615ee884c897d9d2ba09bb4d30da6bb1b15e685065962db5b02e76e4996488',
    extract: [
      // 1,540,506 bytes.
      { entry: `${SEGMENTATION_DIR}/model.int8.onnx`, file: SEGMENTATION_FILES[0], sha256: 'd582f4b4c6b48205de7e0643c57df0df5615a3c176189be3fc461e9d18827b5d' },
      { entry: `${SEGMENTATION_DIR}/LICENSE`, file: `${SEGMENTATION_DIR}/LICENSE` },
    ],
    license: 'MIT (pyannote segmentation-3.0, © 2022 CNRS; LICENSE in the archive)',
  },
  {
    url: `${RELEASES}/speaker-recongition-models/${EMBEDDING_FILE}`,
    bytes: 29_596_978,
    sha256: '357a834f702b80161e5b981182c038e18553c1f2ca752ed6cec2052365d4129b',
    file: EMBEDDING_FILE,
    license: 'Apache-2.0 (3D-Speaker CAM++, modelscope iic/speech_campplus_sv_en_voxceleb_16k)',
  },
]);

const isFile = (file: string) => {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
};

/**
 * The diarization models under `modelsDir`, or the files missing there (paths relative to
 * it, the segmentation's preferred name first), so a caller can refuse with a clear 4xx
 * before anything is held.
 */
export function diarizationModelsOf(modelsDir: string): DiarizationModels | { missing: string[] } {
  const dir = path.resolve(modelsDir);
  const segmentation = SEGMENTATION_FILES.map((f) => path.join(dir, f)).find(isFile);
  const embedding = path.join(dir, EMBEDDING_FILE);
  const missing = [...(segmentation ? [] : [SEGMENTATION_FILES[0]]), ...(isFile(embedding) ? [] : [EMBEDDING_FILE])];
  return segmentation && missing.length === 0 ? { segmentation, embedding } : { missing };
}
