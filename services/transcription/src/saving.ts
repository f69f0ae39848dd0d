/**
 * Where a transcript is stored: the transcription service is the one owner of saving a
 * transcription as a recording, for a synchronous Transcribe as for a job. The options (`save`,
 * `title`, `folder_id`) are checked before anything is held; the recording is stored before the
 * charge is committed, under an id derived from the transcription's (CreateRecording with an id
 * is idempotent), so a retried save finds it and a transcription that ends without its charge can
 * take it back: a saved transcript is always a charged one.
 */
import { MAX_TITLE_CHARS, MurmurError, titleOf, transcriptionTitle } from '@murmur/contract';
import { type Logger, type PromiseClient } from '@murmur/kit';
import type { library, transcription } from '@murmur/proto';

/** The library RPCs saving uses: the folder check, the recording, taking it back. */
export type LibraryPort = Pick<PromiseClient<library.LibraryServiceClient>, 'createRecording' | 'deleteRecording' | 'getFolder'>;

/** The saving options of a Transcribe or SubmitTranscription config (or their late options). */
export interface SaveOptions {
  save: boolean;
  title: string;
  folderId: string;
}

/**
 * Checks saving options before anything is held. `partial`, before the audio: each value present
 * is checked (and the folder is the owner's), but not how they combine, since `save` may still
 * follow the audio; `full` once they are all in.
 */
export async function checkSaveOptions(library: Pick<LibraryPort, 'getFolder'>, ownerId: string, o: SaveOptions, mode: 'full' | 'partial'): Promise<void> {
  if (o.title) titleOf(o.title, MAX_TITLE_CHARS);
  if (mode === 'full') checkSaveCombination(o);
  if (o.folderId) await library.getFolder({ ownerId, folderId: o.folderId });
}

/** `title` and `folder_id` only mean something for a saved recording. */
export function checkSaveCombination(o: SaveOptions): void {
  if ((o.title || o.folderId) && !o.save) {
    throw new MurmurError('invalid_request', '`title` and `folder_id` only apply with `save: true`.', { param: o.title ? 'title' : 'folder_id' });
  }
}

/** The id of the recording a transcription (`trn_…`, a call's or a job's) is saved as. */
export function recordingIdOf(transcriptionId: string): string {
  return `rec_${transcriptionId.slice(transcriptionId.indexOf('_') + 1)}`;
}

/** A transcript as library.CreateRecording takes it (the words in columns, as Transcribe answers them). */
export type SavedTranscript = Pick<transcription.TranscribeResponse, 'text' | 'language' | 'segments' | 'words' | 'speakers'> & { durationSeconds: number };

/** Stores the transcript of `transcriptionId` for `ownerId` (idempotent: a retry returns the same recording); answers its id. */
export async function saveRecording(library: LibraryPort, transcriptionId: string, ownerId: string, o: SaveOptions, transcript: SavedTranscript, madeAt: Date): Promise<string> {
  const { recording } = await library.createRecording({
    ownerId,
    title: o.title || transcriptionTitle(madeAt),
    folderId: o.folderId,
    durationSeconds: transcript.durationSeconds,
    transcript: {
      text: transcript.text,
      language: transcript.language,
      segments: transcript.segments,
      timeline: { words: transcript.words, speakers: transcript.speakers, wordCount: transcript.words?.text.length ?? 0 },
    },
    createdAt: undefined,
    recordingId: recordingIdOf(transcriptionId),
  });
  if (!recording) throw new Error('library answered CreateRecording without a recording');
  return recording.id;
}

/**
 * Takes back the recording a transcription that ended without its charge may have stored. Best
 * effort: a failure is logged (the recording would stay; nothing else can be done here).
 */
export async function takeBackRecording(library: LibraryPort, log: Logger, ownerId: string, recordingId: string, context: Record<string, string>): Promise<void> {
  try {
    const { deleted } = await library.deleteRecording({ ownerId, recordingId });
    if (deleted) log.info({ ...context, recording_id: recordingId }, 'recording of an uncharged transcription deleted');
  } catch (err) {
    log.error({ ...context, recording_id: recordingId, err: (err as Error).message }, 'recording of an uncharged transcription not deleted');
  }
}
