-- Issue 34: passage search. A passage is what search ranks and cites: a recording's speaker turn
-- or a 30–60 s window of it, a thread item's text, a knowledge base's description (cut by
-- src/passages.ts). Passages are written in the transaction of the row they come from, so the
-- index is never stale; a source's title and speaker names are read at search time (they change
-- without the text changing).
--
-- folder_id and source_created_at are copies of the source's, kept for the filters (a moved
-- recording updates its passages in the same transaction). `embedding` holds the passage's vector
-- when an embeddings engine is configured (filled after the write: an engine is a network call and
-- never runs inside a transaction) as little-endian float32s of unit length, `embedding_model` the
-- model that made it.
CREATE TABLE passages (
  id                 text COLLATE "C" PRIMARY KEY,
  owner_id           text COLLATE "C" NOT NULL,
  source             text NOT NULL CHECK (source IN ('recording', 'thought_thread', 'knowledge_base')),
  source_id          text COLLATE "C" NOT NULL,
  -- Position within the source (a thread's passages: in item order, then within an item).
  ordinal            integer NOT NULL,
  thread_item_id     text COLLATE "C",
  folder_id          text COLLATE "C",
  source_created_at  timestamptz(3) NOT NULL,
  text               text NOT NULL,
  start_seconds      double precision,
  end_seconds        double precision,
  speaker            text,
  search             tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
  embedding          bytea,
  embedding_model    text,
  UNIQUE (owner_id, source_id, ordinal)
);
CREATE INDEX passages_search_idx ON passages USING GIN (search);
CREATE INDEX passages_owner_source_idx ON passages (owner_id, source, source_id);

-- Rows written before this migration have no passages yet: the service indexes them in the
-- background at start (oldest first), and marks each row it did. New writes set the mark.
ALTER TABLE recordings ADD COLUMN passages_indexed boolean NOT NULL DEFAULT false;
ALTER TABLE thread_items ADD COLUMN passages_indexed boolean NOT NULL DEFAULT false;
ALTER TABLE knowledge_bases ADD COLUMN passages_indexed boolean NOT NULL DEFAULT false;
CREATE INDEX recordings_unindexed_idx ON recordings (created_at) WHERE NOT passages_indexed;
CREATE INDEX thread_items_unindexed_idx ON thread_items (created_at) WHERE NOT passages_indexed;
CREATE INDEX knowledge_bases_unindexed_idx ON knowledge_bases (created_at) WHERE NOT passages_indexed;
