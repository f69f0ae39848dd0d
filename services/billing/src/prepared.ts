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
import type { PoolClient, QueryResult, QueryResultRow } from 'pg';

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

const named: RunStatement = (client, text, values) => {
  const name = nameOf(text);
  return name === undefined ? client.query(text, values) : client.query({ name, text, values });
};
const unnamed: RunStatement = (client, text, values) => client.query(text, values);

/** How statements run on this database: prepared by name on a Postgres server, unnamed on the embedded PGlite. */
export function statementRunner(embedded: boolean): RunStatement {
  return embedded ? unnamed : named;
}
