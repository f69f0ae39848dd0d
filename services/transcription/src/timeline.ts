/**
 * From a stitched transcript to the timeline a call answers and stores (contract Timeline), and
 * from a timeline to Transcribe's answer (words in columns). Later stages — speakers, redaction —
 * work on the timeline. Pure.
 */
import { speakersToWire, wordsToWire, type Timeline } from '@murmur/contract';
import type { transcription } from '@murmur/proto';
import type { StitchedTranscript } from './stitch';

export function timelineOf(transcript: StitchedTranscript): Timeline {
  return {
    text: transcript.text,
    segments: transcript.segments.map((s) => ({ start: s.start, end: s.end, text: s.text, speaker: null })),
    words: transcript.words.map((w) => ({ text: w.text, start: w.start, end: w.end, confidence: w.confidence, speaker: null })),
    speakers: [],
  };
}

/** The timeline's parts of a TranscribeResponse. */
export function timelineToResponse(t: Timeline): Pick<transcription.TranscribeResponse, 'text' | 'segments' | 'words' | 'speakers'> {
  return {
    text: t.text,
    segments: t.segments.map((s) => ({ startSeconds: s.start, endSeconds: s.end, text: s.text, ...(s.speaker ? { speaker: s.speaker } : {}) })),
    words: wordsToWire(t.words, t.speakers),
    speakers: speakersToWire(t.speakers),
  };
}
