-- What each API key may do (issue 30): the same scopes OAuth access tokens carry (kit
-- oauth-rules.ts). "read" is every read; "ai" is every call that spends credits or changes state
-- (transcribe, convert, transcription jobs). A full-access key has both, a read-only key "read"
-- alone; every key reads. Keys made before this migration keep full access (the default).
ALTER TABLE api_keys
  ADD COLUMN scopes text[] NOT NULL DEFAULT ARRAY['read', 'ai']::text[]
    CHECK ('read' = ANY (scopes) AND scopes <@ ARRAY['read', 'ai']::text[]);
