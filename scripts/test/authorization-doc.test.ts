/**
 * docs/authorization.md prints the policy table for people; this keeps it the table the services
 * enforce (contract rpc-policy.ts): a rule changed in code and not in the document fails here.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { RPC_RULES, type OwnerField } from '@murmur/contract';

const DOC = path.resolve(__dirname, '..', '..', 'docs', 'authorization.md');
const BEGIN = '<!-- policy-table:begin -->';
const END = '<!-- policy-table:end -->';

/** The proto field name a reader of the .proto files knows. */
const PROTO_FIELD: Record<OwnerField, string> = { ownerId: 'owner_id', userId: 'user_id', 'lookup:userId': 'user_id', 'payload:config.userId': 'config.user_id' };

function renderTable(): string {
  const rows = ['| RPC | a developer, own data only (owner field), with the scope named | workloads, for any user | app admin |', '|---|---|---|---|'];
  for (const [p, rule] of RPC_RULES) {
    const [service, method] = p.slice(1).split('/') as [string, string];
    const name = `${service.split('.').pop()}/${method}`;
    if (rule.anyone) {
      rows.push(`| ${name} | anyone who reaches the port | | |`);
      continue;
    }
    const owner = rule.user ? (rule.user.owner ? `yes (\`${PROTO_FIELD[rule.user.owner]}\`)` : 'yes') : '';
    const user = rule.user?.scope ? `${owner}, scope \`${rule.user.scope}\`` : owner;
    rows.push(`| ${name} | ${user} | ${(rule.workloads ?? []).join(', ')} | ${rule.admin ? 'yes' : ''} |`);
  }
  return rows.join('\n');
}

describe('docs/authorization.md', () => {
  it('prints the policy table the services enforce, row for row', () => {
    const doc = readFileSync(DOC, 'utf8');
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThan(-1);
    expect(end).toBeGreaterThan(start);
    const printed = doc.slice(start + BEGIN.length, end).trim();
    // On a mismatch, the expected text is the table to paste between the markers.
    expect(printed).toBe(renderTable());
  });
});
