-- Jobs are listed newest first by keyset paging on (created_at, id), and a cursor carries
-- created_at in milliseconds: a column with microseconds let a job created in the same
-- millisecond as a page's last row, but before it, fall between pages. Milliseconds, as the
-- library's lists and webhook deliveries keep.
ALTER TABLE jobs ALTER COLUMN created_at TYPE timestamptz(3);
