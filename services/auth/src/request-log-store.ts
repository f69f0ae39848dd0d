/**
 * The request log's SQL (migration 008): a table partitioned by UTC day, one partition per day
 * named request_log_YYYYMMDD, made ahead of the writes and dropped whole once past the days kept.
 * Every statement is a single autocommit query (safe on the embedded PGlite).
 */
import type { Database } from '@murmur/kit';

/** One stored call (the columns of request_log, plus the key's hint on reads). */
export interface RequestLogRow {
  owner_id: string;
  created_at: Date;
  request_id: string;
  method: string;
  route: string;
  tool: string;
  status: number;
  error_code: string;
  latency_us: number;
  key_id: string;
  client_id: string;
  trace_id: string;
  bytes_in: string | number;
  bytes_out: string | number;
  credits_charged: string | number;
}

export interface RequestLogReadRow extends RequestLogRow {
  key_hint: string;
}

export interface RequestLogQuery {
  ownerId: string;
  /** Inclusive lower and exclusive upper bound of created_at. */
  since: Date;
  until: Date;
  /** [low, high) of the status, or null for any. */
  status: [number, number] | null;
  route: string;
  tool: string;
  keyId: string;
  /** One request id, or '' for any. */
  requestId: string;
  /** Strictly after this (created_at, request_id), newest first. */
  after?: { createdAt: Date; id: string };
  /** Rows to fetch (a page's limit + 1). */
  limit: number;
}

/** The columns written, in the table's order (json_populate_recordset fills them by name). */
const COLUMNS =
  'owner_id, created_at, request_id, method, route, tool, status, error_code, latency_us, key_id, client_id, trace_id, bytes_in, bytes_out, credits_charged';

const DAY_MS = 86_400_000;
const PARTITION = /^request_log_(\d{4})(\d{2})(\d{2})$/;

/** The UTC day a time falls in, as its first instant. */
export function dayOf(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

function partitionName(day: Date): string {
  return `request_log_${day.toISOString().slice(0, 10).replace(/-/g, '')}`;
}

/** Postgres's "already exists" answers, which a replica creating the same partition at once meets. */
function alreadyExists(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === '42P07' || code === '23505' || code === '42710';
}

export class RequestLogStore {
  /** Days whose partition this process made or saw, so a batch costs no DDL after the first. */
  private readonly known = new Set<number>();

  constructor(private readonly db: Database) {}

  /** Makes the partition of `day` (a UTC midnight) unless it exists. */
  async ensurePartition(day: Date): Promise<void> {
    if (this.known.has(day.getTime())) return;
    const next = new Date(day.getTime() + DAY_MS);
    try {
      await this.db.query(
        `CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF request_log FOR VALUES FROM ('${day.toISOString()}') TO ('${next.toISOString()}')`,
      );
    } catch (err) {
      if (!alreadyExists(err)) throw err;
    }
    this.known.add(day.getTime());
  }

  /** The days that have a partition now. */
  async partitionDays(): Promise<Date[]> {
    const rows = await this.db.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i
         JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
         JOIN pg_namespace n ON n.oid = p.relnamespace
       WHERE p.relname = 'request_log' AND n.nspname = current_schema()`,
    );
    const days: Date[] = [];
    for (const { name } of rows) {
      const m = PARTITION.exec(name);
      if (m) days.push(new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))));
    }
    return days.sort((a, b) => a.getTime() - b.getTime());
  }

  /** Drops the partition of `day`, every row of it at once. */
  async dropPartition(day: Date): Promise<void> {
    this.known.delete(day.getTime());
    await this.db.query(`DROP TABLE IF EXISTS ${partitionName(day)}`);
  }

  /**
   * Stores rows (their days' partitions exist); a row already stored is kept once. Answers how
   * many were new. The batch travels as one JSON parameter: cheaper to send and to read than an
   * array per column (measured: ~20 % less per row).
   */
  async insert(rows: readonly RequestLogRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const [row] = await this.db.query<{ n: string }>(
      `WITH stored AS (
         INSERT INTO request_log (${COLUMNS}) SELECT ${COLUMNS} FROM json_populate_recordset(NULL::request_log, $1::json)
         ON CONFLICT DO NOTHING RETURNING 1)
       SELECT count(*) AS n FROM stored`,
      [JSON.stringify(rows)],
    );
    return Number(row?.n ?? 0);
  }

  /** One owner's calls, newest first, with the key's hint (none for OAuth connections). */
  async list(q: RequestLogQuery): Promise<RequestLogReadRow[]> {
    return this.db.query<RequestLogReadRow>(
      `SELECT r.*, COALESCE(k.hint, '') AS key_hint
         FROM request_log r LEFT JOIN api_keys k ON k.id = r.key_id AND k.user_id = r.owner_id
        WHERE r.owner_id = $1 AND r.created_at >= $2 AND r.created_at < $3
          AND ($4::int IS NULL OR (r.status >= $4 AND r.status < $5))
          AND ($6 = '' OR r.route = $6) AND ($7 = '' OR r.tool = $7) AND ($8 = '' OR r.key_id = $8)
          AND ($9::timestamptz IS NULL OR (r.created_at, r.request_id) < ($9, $10)) AND ($12 = '' OR r.request_id = $12)
        ORDER BY r.created_at DESC, r.request_id DESC
        LIMIT $11`,
      [
        q.ownerId,
        q.since,
        q.until,
        q.status?.[0] ?? null,
        q.status?.[1] ?? null,
        q.route,
        q.tool,
        q.keyId,
        q.after?.createdAt ?? null,
        q.after?.id ?? '',
        q.limit,
        q.requestId,
      ],
    );
  }
}
