-- An artifact's structure as data (the conversion's `data`: items with owners and due dates,
-- sections, …), kept beside its text so a replayed conversion and a recording's artifacts
-- answer it too. NULL for artifacts stored before it was kept.
ALTER TABLE artifacts ADD COLUMN data jsonb;
