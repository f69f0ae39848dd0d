-- Issue 34: the passages an embeddings engine has not turned into vectors yet, found without a
-- scan (the embedder asks for them in batches). `embedding_model` is set once a passage's vector
-- is stored, in `embedding` (the array index) or in `passage_vectors` (pgvector, made on first use).
CREATE INDEX passages_unembedded_idx ON passages (id) WHERE embedding_model IS NULL;
