/**
 * BillingStore on Postgres: the account lock (withAccount), the lock-free reads and the
 * background sweeps. The locked transaction itself is account-transaction.ts.
 */
import type { CommitWith, Database } from '@murmur/kit';
import { HAS_EXPIRED_HOLDS, lockStatement, lockedAccount } from './account-lock';
import { PostgresAccountTransaction } from './account-transaction';
import { statementConfig, statementRunner, type RunStatement, type StatementConfig } from './prepared';
import { LEDGER_COLUMNS, toAccount, toLedgerEntry, type AccountRow, type ChargeRow, type DailyUsageRow, type LedgerRow } from './rows';
import type {
  Account,
  AccountSnapshot,
  AccountTransaction,
  AdmissionRecord,
  BillingStore,
  ChargeRecord,
  DailyUsageRecord,
  LedgerEntryRecord,
  LedgerPosition,
  LockReadAhead,
  NewAccount,
} from './store';

/** BillingStore over the service's own Postgres schema. */
export class PostgresBillingStore implements BillingStore {
  private readonly run: RunStatement;
  private readonly statement: StatementConfig;

  constructor(private readonly db: Database) {
    this.run = statementRunner(db.embedded);
    this.statement = statementConfig(db.embedded);
  }

  async findAccount(userId: string, now: Date): Promise<AccountSnapshot | undefined> {
    const [row] = await this.db.query<AccountRow & { has_expired_holds: boolean }>(
      `SELECT a.*, ${HAS_EXPIRED_HOLDS} FROM accounts a WHERE a.user_id = $1`,
      [userId, now],
    );
    return row ? { account: toAccount(row), hasExpiredHolds: row.has_expired_holds } : undefined;
  }

  async withAccount<T>(
    userId: string,
    initial: NewAccount,
    fn: (account: Account, tx: AccountTransaction, created: boolean) => Promise<T>,
    ahead: LockReadAhead = { now: initial.createdAt },
  ): Promise<T> {
    return this.db.transaction(async (client, commitWith) => {
      // The account nearly always exists: lock it straight away (reading ahead, account-lock.ts),
      // and insert only when it is missing.
      const statement = lockStatement(userId, ahead);
      const lock = async () => (await this.run<AccountRow & Record<string, unknown>>(client, statement.text, statement.values)).rows[0];
      let row = await lock();
      let created = false;
      if (!row) {
        const inserted = await client.query(
          `INSERT INTO accounts (user_id, plan_id, monthly_remaining, prepaid_remaining, reserved, period_start, period_end,
                                 spending_cap_cents, spend_cents, credits_used, transcriptions, transcription_seconds, conversions,
                                 created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)
           ON CONFLICT (user_id) DO NOTHING`,
          [
            userId,
            initial.planId,
            initial.monthlyRemaining,
            initial.prepaidRemaining,
            initial.reserved,
            initial.periodStart,
            initial.periodEnd,
            initial.spendingCapCents,
            initial.spendCents,
            initial.creditsUsed,
            initial.transcriptions,
            initial.transcriptionSeconds,
            initial.conversions,
            initial.createdAt,
          ],
        );
        created = inserted.rowCount === 1;
        row = await lock();
      }
      if (!row) throw new Error('account missing right after its insert');
      const locked = lockedAccount(row, ahead);
      const tx = new PostgresAccountTransaction(client, this.run, userId, locked.account, locked.hasExpiredHolds ? null : ahead.now, locked.ahead);
      const out = await fn(locked.account, tx, created);
      this.sendWithCommit(tx, commitWith);
      return out;
    });
  }

  /** The queued writes travel with the COMMIT; their statement checks itself (write-batch.ts). */
  private sendWithCommit(tx: PostgresAccountTransaction, commitWith: CommitWith): void {
    const writes = tx.takeWrites();
    if (writes) commitWith(this.statement(writes.text, writes.values));
  }

  async withAccountIfUnlocked<T>(
    userId: string,
    fn: (account: Account, tx: AccountTransaction) => Promise<T>,
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    return this.db.transaction(async (client, commitWith) => {
      const { rows } = await client.query<AccountRow>('SELECT * FROM accounts WHERE user_id = $1 FOR UPDATE SKIP LOCKED', [userId]);
      const row = rows[0];
      if (!row) return { ran: false };
      const account = toAccount(row);
      const tx = new PostgresAccountTransaction(client, this.run, userId, account, null, null);
      const value = await fn(account, tx);
      this.sendWithCommit(tx, commitWith);
      return { ran: true, value };
    });
  }

  async insertAdmission(a: AdmissionRecord): Promise<void> {
    await this.db.query(
      `INSERT INTO admissions (id, user_id, operation, created_at, expires_at, consumed_at, reservation_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [a.id, a.userId, a.operation, a.createdAt, a.expiresAt, a.consumedAt, a.reservationId],
    );
  }

  async usersWithExpiredHolds(now: Date, limit: number, exclude: string[]): Promise<string[]> {
    // Oldest deadlines first (the partial index on expires_at); DISTINCT after the ordering.
    const rows = await this.db.query<{ user_id: string }>(
      `SELECT user_id FROM (
         SELECT user_id, min(expires_at) AS first_deadline FROM reservations
         WHERE state = 'held' AND expires_at <= $1 AND NOT (user_id = ANY($3::text[]))
         GROUP BY user_id
       ) due ORDER BY first_deadline LIMIT $2`,
      [now, limit, exclude],
    );
    return rows.map((r) => r.user_id);
  }

  async deleteAdmissionsExpiredBefore(cutoff: Date): Promise<number> {
    const rows = await this.db.query<{ id: string }>('DELETE FROM admissions WHERE expires_at < $1 RETURNING id', [cutoff]);
    return rows.length;
  }

  async dailyUsage(userId: string, from: Date, until: Date): Promise<DailyUsageRecord[]> {
    // The day is taken in UTC whatever the session's time zone (AT TIME ZONE 'UTC' of a timestamptz).
    const rows = await this.db.query<DailyUsageRow>(
      `SELECT to_char(settled_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, sum(credits) AS credits,
              count(*) FILTER (WHERE operation = 'transcribe') AS transcriptions,
              count(*) FILTER (WHERE operation = 'convert') AS conversions
       FROM reservations
       WHERE user_id = $1 AND state = 'committed' AND settled_at >= $2 AND settled_at < $3
       GROUP BY 1 ORDER BY 1`,
      [userId, from, until],
    );
    return rows.map((r) => ({ date: r.date, credits: Number(r.credits), transcriptions: Number(r.transcriptions), conversions: Number(r.conversions) }));
  }

  async recentCharges(userId: string, limit: number): Promise<ChargeRecord[]> {
    const rows = await this.db.query<ChargeRow>(
      `SELECT id, operation, credits, spend_cents, settled_at FROM reservations
       WHERE user_id = $1 AND state = 'committed'
       ORDER BY settled_at DESC, id DESC LIMIT $2`,
      [userId, limit],
    );
    return rows.map((r) => ({
      reservationId: r.id,
      operation: r.operation,
      credits: Number(r.credits),
      spendCents: Number(r.spend_cents),
      chargedAt: r.settled_at,
    }));
  }

  async listLedgerEntries(userId: string, limit: number, after?: LedgerPosition): Promise<LedgerEntryRecord[]> {
    const rows = after
      ? await this.db.query<LedgerRow>(
          `SELECT ${LEDGER_COLUMNS} FROM ledger_entries
           WHERE user_id = $1 AND (created_at, seq) < ($2, $3)
           ORDER BY created_at DESC, seq DESC LIMIT $4`,
          [userId, after.createdAt, after.seq, limit],
        )
      : await this.db.query<LedgerRow>(
          `SELECT ${LEDGER_COLUMNS} FROM ledger_entries WHERE user_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2`,
          [userId, limit],
        );
    return rows.map(toLedgerEntry);
  }
}
