/**
 * Billing's hot statements as named prepared statements: Postgres parses and plans each once
 * per connection instead of on every call (a reserve or a commit runs the same few statements
 * thousands of times a second under load). The name is derived from the text, so one text is
 * always one statement; past {@link MAX_NAMED} distinct texts the rest run unnamed.
 *
 * Not on the embedded PGlite: its one session outlives the pool's connections, so a statement
 * named by a connection the pool has since closed would collide with the next connection's
 * ("prepared statement … already exists"). There every statement runs unnamed.
 */
import { createHash } from 'node:crypto';
import type { PoolClient, QueryConfig, QueryResult, QueryResultRow } from 'pg';

const MAX_NAMED = 500;
const names = new Map<string, string>();

function nameOf(text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED) {
    name = `billing_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return name;
}

/** Runs one statement with its parameters on a transaction's connection. */
export type RunStatement = <R extends QueryResultRow>(client: PoolClient, text: string, values: unknown[]) => Promise<QueryResult<R>>;

/** One statement as pg takes it: named where it is prepared (see the module comment). */
export type StatementConfig = (text: string, values: unknown[]) => QueryConfig;

const namedConfig: StatementConfig = (text, values) => {
  const name = nameOf(text);
  return name === undefined ? { text, values } : { name, text, values };
};
const unnamedConfig: StatementConfig = (text, values) => ({ text, values });

/** How statements are sent to this database: prepared by name on a Postgres server, unnamed on the embedded PGlite. */
export function statementConfig(embedded: boolean): StatementConfig {
  return embedded ? unnamedConfig : namedConfig;
}

/** Runs statements as {@link statementConfig} makes them. */
export function statementRunner(embedded: boolean): RunStatement {
  const config = statementConfig(embedded);
  return (client, text, values) => client.query(config(text, values));
}
