-- Transcription jobs (POST /transcriptions): one row a job, the public object's source of truth.
-- The queue itself is pg-boss's, in its own schema (transcription_queue); a job row and its
-- queue entry are written in one transaction.
CREATE TABLE jobs (
  id text PRIMARY KEY,                      -- trn_…
  owner_id text NOT NULL,
  idempotency_key text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'processing', 'completed', 'failed', 'canceled')),
  language text NOT NULL DEFAULT '',
  filename text NOT NULL DEFAULT '',
  content_type text NOT NULL DEFAULT '',
  save boolean NOT NULL DEFAULT false,
  title text NOT NULL DEFAULT '',
  folder_id text NOT NULL DEFAULT '',
  -- Key of the stored upload in the audio store; null once deleted (the job ended).
  audio_key text,
  upload_bytes bigint NOT NULL,
  duration_seconds double precision NOT NULL,
  processed_seconds double precision NOT NULL DEFAULT 0,
  reservation_id text NOT NULL,
  -- The pg-boss entry of the job (cancel takes it out of the queue).
  queue_job_id text,
  credits_reserved bigint NOT NULL,
  -- Whether the credit hold is still open (not yet committed or released).
  hold_open boolean NOT NULL DEFAULT true,
  attempts integer NOT NULL DEFAULT 0,
  -- Completed: {id, text, language, duration_seconds, segments, model, credits_charged}.
  result jsonb,
  recording_id text NOT NULL DEFAULT '',
  -- Failed: {code, message, param}.
  error jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (owner_id, idempotency_key)
);

CREATE INDEX jobs_owner_created ON jobs (owner_id, created_at DESC, id DESC);
CREATE INDEX jobs_live ON jobs (status) WHERE status IN ('queued', 'processing');

-- A job's recognition plan and each finished chunk's transcript: a job picked up again after a
-- crash continues from the first chunk without one.
CREATE TABLE job_chunks (
  job_id text NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  index integer NOT NULL,
  start_byte bigint NOT NULL,
  end_byte bigint NOT NULL,
  -- {text, segments: [{start, end, text}], language}; null until recognised.
  result jsonb,
  PRIMARY KEY (job_id, index)
);
