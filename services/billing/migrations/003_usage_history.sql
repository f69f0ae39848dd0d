-- GetUsageHistory: the Usage page's chart of credits per day this period and its table of recent
-- AI calls. Both read one user's committed reservations (the charged calls) by when they were
-- settled, newest first; held, released and expired ones cost nothing and are left out of the
-- index.

CREATE INDEX reservations_user_committed_settled ON reservations (user_id, settled_at DESC) WHERE state = 'committed';
