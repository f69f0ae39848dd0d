/**
 * Billing's hot statements as named prepared statements: Postgres parses and plans each once
 * per connection instead of on every call (a reserve or a commit runs the same few statements
 * thousands of times a second under load). The name is derived from the text, so one text is
 * always one statement; past {@link MAX_NAMED} distinct texts the rest run unnamed.
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

export function prepared<R extends QueryResultRow>(client: PoolClient, text: string, values: unknown[]): Promise<QueryResult<R>> {
  const name = nameOf(text);
  return name === undefined ? client.query<R>(text, values) : client.query<R>({ name, text, values });
}
