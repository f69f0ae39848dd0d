-- A transaction's queued writes go out as one statement (src/write-batch.ts), and on a pipelined
-- connection its COMMIT is already on the wire behind them. So the statement checks itself that
-- each write found its row (a reservation still held, an admission still unconsumed, the account):
-- a miss raises here, which aborts the transaction before that COMMIT can apply it.

CREATE FUNCTION expect_one_row(hits bigint, problem text) RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
  IF hits IS DISTINCT FROM 1 THEN
    RAISE EXCEPTION '%', problem;
  END IF;
  RETURN 1;
END
$$;
