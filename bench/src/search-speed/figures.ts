/**
 * search-speed's figures from what it measured: latency percentiles, and the facts of an
 * EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) plan that say where a query's time went. Pure, so
 * they are checked on hand-made inputs (bench/test/search-speed.test.ts).
 */
import { percentile } from '../load';

export interface LatencySummary {
  n: number;
  p50: number;
  p90: number;
  /** Nearest rank: with fewer than 100 samples it is the largest. */
  p99: number;
  max: number;
  mean: number;
}

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Nearest-rank percentiles, max and mean of `samples` (ms), to `digits` decimals; zeros for none. */
export function latencySummary(samples: readonly number[], digits = 2): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.length === 0 ? 0 : sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 0.5), digits),
    p90: round(percentile(sorted, 0.9), digits),
    p99: round(percentile(sorted, 0.99), digits),
    max: round(sorted.at(-1) ?? 0, digits),
    mean: round(mean, digits),
  };
}

/** One node of a plan, with what makes it slow or fast. */
export interface PlanNode {
  depth: number;
  node: string;
  /** Relation or index it reads, when it reads one. */
  on?: string;
  rows: number;
  loops: number;
  /** Inclusive time of the node (all loops), ms. */
  ms: number;
  removed_by_filter?: number;
  removed_by_recheck?: number;
  heap_blocks_exact?: number;
  heap_blocks_lossy?: number;
  sort?: string;
  /** A sort's key, as EXPLAIN writes it. */
  sort_key?: string;
  shared_hit?: number;
  shared_read?: number;
}

export interface PlanFacts {
  planning_ms: number;
  execution_ms: number;
  /** Buffers of the whole statement (the top node's, which include its children's). */
  shared_hit: number;
  shared_read: number;
  temp_blocks: number;
  nodes: PlanNode[];
}

/** A plan node as EXPLAIN's JSON format writes it (only the fields read here). */
type JsonPlan = Record<string, unknown> & { Plans?: JsonPlan[] };

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** The facts of one EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) result: `[{ Plan, Planning Time, Execution Time }]`. */
export function planFacts(explain: unknown): PlanFacts {
  const top = (Array.isArray(explain) ? explain[0] : explain) as { Plan: JsonPlan; 'Planning Time'?: number; 'Execution Time'?: number };
  const nodes: PlanNode[] = [];
  const walk = (p: JsonPlan, depth: number) => {
    const loops = num(p['Actual Loops']) || 1;
    const node: PlanNode = {
      depth,
      node: String(p['Node Type']) + (p['Strategy'] && p['Node Type'] === 'Aggregate' ? ` (${String(p['Strategy'])})` : ''),
      rows: num(p['Actual Rows']) * loops,
      loops,
      ms: round(num(p['Actual Total Time']) * loops, 3),
    };
    const on = p['Index Name'] ?? p['Relation Name'] ?? p['CTE Name'];
    if (typeof on === 'string') node.on = on;
    if (p['Rows Removed by Filter'] !== undefined) node.removed_by_filter = num(p['Rows Removed by Filter']) * loops;
    if (p['Rows Removed by Index Recheck'] !== undefined) node.removed_by_recheck = num(p['Rows Removed by Index Recheck']) * loops;
    if (p['Exact Heap Blocks'] !== undefined) node.heap_blocks_exact = num(p['Exact Heap Blocks']);
    if (p['Lossy Heap Blocks'] !== undefined) node.heap_blocks_lossy = num(p['Lossy Heap Blocks']);
    if (p['Sort Method'] !== undefined) node.sort = `${String(p['Sort Method'])}, ${num(p['Sort Space Used'])} kB ${String(p['Sort Space Type'] ?? '')}`.trim();
    if (Array.isArray(p['Sort Key'])) node.sort_key = (p['Sort Key'] as unknown[]).map(String).join(', ');
    if (p['Shared Hit Blocks'] !== undefined) node.shared_hit = num(p['Shared Hit Blocks']);
    if (p['Shared Read Blocks'] !== undefined) node.shared_read = num(p['Shared Read Blocks']);
    nodes.push(node);
    for (const child of p.Plans ?? []) walk(child, depth + 1);
  };
  walk(top.Plan, 0);
  return {
    planning_ms: round(num(top['Planning Time']), 3),
    execution_ms: round(num(top['Execution Time']), 3),
    shared_hit: num(top.Plan['Shared Hit Blocks']),
    shared_read: num(top.Plan['Shared Read Blocks']),
    temp_blocks: num(top.Plan['Temp Read Blocks']) + num(top.Plan['Temp Written Blocks']),
    nodes,
  };
}

/**
 * One line on where a search statement's time went: the rows the full-text index gave, what the
 * heap kept of them (and threw away by recheck or filter), how many were ranked (the input of the
 * sort by ts_rank_cd) and what ranking and sorting them took, and the buffers.
 */
export function planSummary(facts: PlanFacts): string {
  const gin = facts.nodes.find((n) => n.node === 'Bitmap Index Scan' && n.on?.includes('search'));
  const heap = facts.nodes.find((n) => n.node === 'Bitmap Heap Scan');
  const rankSort = facts.nodes.findIndex((n) => n.sort_key?.includes('ts_rank_cd'));
  const parts = [`${facts.execution_ms} ms`];
  if (gin) parts.push(`${gin.on} → ${gin.rows} row ids`);
  if (heap) {
    const removed = [heap.removed_by_recheck ? `${heap.removed_by_recheck} removed by recheck` : '', heap.removed_by_filter ? `${heap.removed_by_filter} by filter` : ''].filter(Boolean).join(', ');
    parts.push(`heap kept ${heap.rows} rows${removed ? ` (${removed})` : ''}, ${heap.heap_blocks_exact ?? 0} exact + ${heap.heap_blocks_lossy ?? 0} lossy blocks, ${heap.ms} ms`);
  } else {
    const scan = facts.nodes.find((n) => /Scan/.test(n.node) && n.on && n.on !== 'q');
    if (scan) parts.push(`${scan.node} on ${scan.on} → ${scan.rows} rows`);
  }
  if (rankSort >= 0) {
    const sort = facts.nodes[rankSort]!;
    const input = facts.nodes[rankSort + 1];
    const below = heap && heap.depth > sort.depth ? heap.ms : 0;
    parts.push(`ranked ${input?.rows ?? 0} rows (ts_rank_cd + ${sort.sort}) ${Math.round((sort.ms - below) * 10) / 10} ms`);
  }
  parts.push(`buffers hit ${facts.shared_hit}, read ${facts.shared_read}${facts.temp_blocks ? `, temp ${facts.temp_blocks}` : ''}`);
  return parts.join('; ');
}
