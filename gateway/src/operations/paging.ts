/** Paging input shared by every list operation (REST query and MCP arguments alike). */
import type { library } from '@murmur/proto';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, pageSizeOf } from '@murmur/contract';

/** The contract's page sizes (contract limits.ts), which the library enforces too; the front ends describe them. */
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT };

export interface PageInput {
  /** 1–100; absent means 20. */
  limit?: number;
  cursor?: string;
}

/**
 * The RPC page of a public page input. The public contract has no "0 means default" (the wire
 * format's convention), so an explicit limit outside 1–100 is refused here.
 */
export function pageRequest(input: PageInput): library.PageRequest {
  return { limit: pageSizeOf(input.limit, 'limit', { zeroMeansDefault: false }), cursor: input.cursor ?? '' };
}
