-- The library schema: a user's recordings (with transcripts and artifacts), Thought Threads,
-- folders and knowledge bases. Every row carries owner_id and every reference between rows is
-- a composite (owner_id, id) foreign key, so a row can never point at another owner's data,
-- whatever the application code does.
--
-- Ids are COLLATE "C" so their order (the keyset tie-break) is plain byte order everywhere.
-- Ordering columns are timestamptz(3): millisecond precision, exactly what a JS Date holds, so
-- a keyset cursor built from a row's created_at compares equal to the stored value.

CREATE TABLE folders (
  id          text COLLATE "C" PRIMARY KEY,
  owner_id    text COLLATE "C" NOT NULL,
  name        text NOT NULL,
  created_at  timestamptz(3) NOT NULL,
  updated_at  timestamptz(3) NOT NULL,
  UNIQUE (owner_id, id)
);
CREATE INDEX folders_owner_created_idx ON folders (owner_id, created_at DESC, id DESC);

-- The search document of a recording: title and transcript, English configuration. Postgres
-- caps a tsvector at 1 MB of distinct lexemes; a transcript with more (hours of unique tokens,
-- e.g. a pasted hex dump) is indexed on its first 250,000 characters instead of failing the
-- write (250,000 characters of at most 4 bytes each always fit).
CREATE FUNCTION recording_search_vector(title text, transcript text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN to_tsvector('english'::regconfig, title || ' ' || coalesce(transcript, ''));
EXCEPTION WHEN program_limit_exceeded THEN
  RETURN to_tsvector('english'::regconfig, title || ' ' || left(coalesce(transcript, ''), 250000));
END
$$;

CREATE TABLE recordings (
  id                text COLLATE "C" PRIMARY KEY,
  owner_id          text COLLATE "C" NOT NULL,
  title             text NOT NULL DEFAULT '',
  folder_id         text COLLATE "C",
  duration_seconds  double precision NOT NULL DEFAULT 0,
  created_at        timestamptz(3) NOT NULL,
  updated_at        timestamptz(3) NOT NULL,
  -- NULL until the recording is transcribed; '' is a transcript of silence.
  transcript        text,
  language          text NOT NULL DEFAULT '',
  -- [{"start": 0.0, "end": 1.5, "text": "…"}, …]
  segments          jsonb NOT NULL DEFAULT '[]'::jsonb,
  search            tsvector GENERATED ALWAYS AS (recording_search_vector(title, transcript)) STORED,
  UNIQUE (owner_id, id),
  FOREIGN KEY (owner_id, folder_id) REFERENCES folders (owner_id, id)
);
CREATE INDEX recordings_owner_created_idx ON recordings (owner_id, created_at DESC, id DESC);
CREATE INDEX recordings_owner_folder_created_idx ON recordings (owner_id, folder_id, created_at DESC, id DESC);
CREATE INDEX recordings_search_idx ON recordings USING GIN (search);

CREATE TABLE artifacts (
  id               text COLLATE "C" PRIMARY KEY,
  -- Insertion order, the tie-break of artifacts created in the same millisecond.
  seq              bigint GENERATED ALWAYS AS IDENTITY,
  owner_id         text COLLATE "C" NOT NULL,
  recording_id     text COLLATE "C" NOT NULL,
  kind             text NOT NULL,
  format           text NOT NULL CHECK (format IN ('markdown', 'plain')),
  content          text NOT NULL,
  credits_charged  bigint NOT NULL DEFAULT 0,
  created_at       timestamptz(3) NOT NULL,
  FOREIGN KEY (owner_id, recording_id) REFERENCES recordings (owner_id, id)
);
CREATE INDEX artifacts_recording_idx ON artifacts (owner_id, recording_id, created_at, seq);

CREATE TABLE thought_threads (
  id          text COLLATE "C" PRIMARY KEY,
  owner_id    text COLLATE "C" NOT NULL,
  title       text NOT NULL DEFAULT '',
  created_at  timestamptz(3) NOT NULL,
  updated_at  timestamptz(3) NOT NULL,
  UNIQUE (owner_id, id)
);
CREATE INDEX thought_threads_owner_created_idx ON thought_threads (owner_id, created_at DESC, id DESC);

CREATE TABLE thread_items (
  id            text COLLATE "C" PRIMARY KEY,
  seq           bigint GENERATED ALWAYS AS IDENTITY,
  owner_id      text COLLATE "C" NOT NULL,
  thread_id     text COLLATE "C" NOT NULL,
  kind          text NOT NULL CHECK (kind IN ('note', 'recording', 'question', 'answer')),
  text          text NOT NULL DEFAULT '',
  recording_id  text COLLATE "C",
  created_at    timestamptz(3) NOT NULL,
  FOREIGN KEY (owner_id, thread_id) REFERENCES thought_threads (owner_id, id),
  FOREIGN KEY (owner_id, recording_id) REFERENCES recordings (owner_id, id),
  CHECK ((kind = 'recording') = (recording_id IS NOT NULL))
);
CREATE INDEX thread_items_thread_idx ON thread_items (owner_id, thread_id, created_at, seq);

CREATE TABLE knowledge_bases (
  id           text COLLATE "C" PRIMARY KEY,
  owner_id     text COLLATE "C" NOT NULL,
  name         text NOT NULL,
  description  text NOT NULL DEFAULT '',
  created_at   timestamptz(3) NOT NULL,
  updated_at   timestamptz(3) NOT NULL,
  UNIQUE (owner_id, id)
);
CREATE INDEX knowledge_bases_owner_created_idx ON knowledge_bases (owner_id, created_at DESC, id DESC);

CREATE TABLE knowledge_base_recordings (
  owner_id           text COLLATE "C" NOT NULL,
  knowledge_base_id  text COLLATE "C" NOT NULL,
  recording_id       text COLLATE "C" NOT NULL,
  added_at           timestamptz(3) NOT NULL,
  PRIMARY KEY (knowledge_base_id, recording_id),
  FOREIGN KEY (owner_id, knowledge_base_id) REFERENCES knowledge_bases (owner_id, id),
  FOREIGN KEY (owner_id, recording_id) REFERENCES recordings (owner_id, id)
);

-- What a thread draws on: exactly one of recording / folder / knowledge base, named by kind.
CREATE TABLE thread_context_sources (
  id                 text COLLATE "C" PRIMARY KEY,
  seq                bigint GENERATED ALWAYS AS IDENTITY,
  owner_id           text COLLATE "C" NOT NULL,
  thread_id          text COLLATE "C" NOT NULL,
  kind               text NOT NULL CHECK (kind IN ('recording', 'folder', 'knowledge_base')),
  recording_id       text COLLATE "C",
  folder_id          text COLLATE "C",
  knowledge_base_id  text COLLATE "C",
  ref_id             text GENERATED ALWAYS AS (coalesce(recording_id, folder_id, knowledge_base_id)) STORED,
  added_at           timestamptz(3) NOT NULL,
  FOREIGN KEY (owner_id, thread_id) REFERENCES thought_threads (owner_id, id),
  FOREIGN KEY (owner_id, recording_id) REFERENCES recordings (owner_id, id),
  FOREIGN KEY (owner_id, folder_id) REFERENCES folders (owner_id, id),
  FOREIGN KEY (owner_id, knowledge_base_id) REFERENCES knowledge_bases (owner_id, id),
  CHECK (
    (kind = 'recording' AND recording_id IS NOT NULL AND folder_id IS NULL AND knowledge_base_id IS NULL) OR
    (kind = 'folder' AND folder_id IS NOT NULL AND recording_id IS NULL AND knowledge_base_id IS NULL) OR
    (kind = 'knowledge_base' AND knowledge_base_id IS NOT NULL AND recording_id IS NULL AND folder_id IS NULL)
  ),
  -- Adding the same source twice is a no-op, not a duplicate.
  UNIQUE (thread_id, kind, ref_id)
);
CREATE INDEX thread_context_sources_thread_idx ON thread_context_sources (owner_id, thread_id, added_at, seq);
