/** Small SQL-building helpers shared by the store-*.ts files. */
import type { Database } from '@murmur/kit';
import type { PagePosition } from '@murmur/kit';

/** Collects positional parameters while a statement is assembled. */
export class Params {
  readonly values: unknown[] = [];

  /** Adds `value` and returns its placeholder ("$3"). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/**
 * The keyset condition "strictly after `after` in (created_at DESC, id DESC) order", as one
 * row comparison so Postgres can seek the (owner_id, created_at DESC, id DESC) index.
 */
export function afterPosition(params: Params, after: PagePosition | undefined, alias: string): string {
  if (!after) return '';
  return ` AND (${alias}.created_at, ${alias}.id) < (${params.add(after.createdAt)}::timestamptz, ${params.add(after.id)}::text)`;
}

/** pg returns int8 as a string (it may exceed 2^53); our counts and credits never do. */
export function toNumber(value: string | number | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/** The connection a `db.transaction` callback gets (kit's pg PoolClient, without importing pg here). */
export type TxClient = Parameters<Parameters<Database['transaction']>[0]>[0];
