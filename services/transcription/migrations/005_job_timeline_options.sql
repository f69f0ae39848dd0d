-- Issue 32: what a job was asked for beyond its text (words, diarize, speakers_expected,
-- keyterms), checked at submission and read by the worker. The result and each chunk's result
-- (jsonb) carry the words as base64 of murmur.timeline.v1.Words (columns: ~20 bytes a word).
ALTER TABLE jobs ADD COLUMN timeline_options jsonb NOT NULL DEFAULT '{}'::jsonb;
