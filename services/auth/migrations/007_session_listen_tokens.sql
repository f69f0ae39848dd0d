-- Listen tokens of the app's signed-in people (issue 33, listen-tokens.ts): the app's Record page
-- has a session, not an API key, so a token is bound to one or the other. A session-bound token
-- redeems only while its session is neither ended nor expired, as a key-bound one only while its
-- key is unrevoked and unexpired.

ALTER TABLE listen_tokens ALTER COLUMN key_id DROP NOT NULL;
-- The session it was made for (ses_…), when made by the app for a signed-in person.
ALTER TABLE listen_tokens ADD COLUMN session_id text REFERENCES sessions (id);
-- Exactly one of the two: a token acts for a key or for a session, never both or neither.
ALTER TABLE listen_tokens ADD CONSTRAINT listen_tokens_bound_once CHECK ((key_id IS NULL) <> (session_id IS NULL));
