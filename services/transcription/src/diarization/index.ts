/** Diarization (issue 32, speakers): who spoke when, and putting it on a transcript's timeline. */
export { createDiarizer, DiarizationError, DIARIZATION_SAMPLE_RATE, type Diarizer, type DiarizerOptions, type DiarizeOptions, type SpeakerTurn } from './diarizer';
export { diarizationModelsOf, DIARIZATION_DOWNLOADS, DIARIZATION_FETCH_COMMAND, EMBEDDING_FILE, SEGMENTATION_FILES, type DiarizationModels, type PinnedDownload } from './models';
export { assignSpeakers } from './assign-speakers';
export { diarizationPort, pcmToFloat, type DiarizationPort } from './port';
