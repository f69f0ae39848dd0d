-- Issue 32: a transcript's words and speakers. `words` holds the bytes of
-- murmur.timeline.v1.Words (columns of packed scalars: ~20 bytes a word, ~400 KB for a two-hour
-- recording), read only when asked for (GetRecording include_words): lists and plain reads never
-- touch it. `speakers`: [{"id": "S1", "name": "Maria"}, …]; segments may carry "speaker".
ALTER TABLE recordings
  ADD COLUMN words bytea,
  ADD COLUMN word_count integer NOT NULL DEFAULT 0,
  ADD COLUMN speakers jsonb NOT NULL DEFAULT '[]'::jsonb;
