// Cursor pagination over entgql connections (first/after forward, last/before backward).
import { useState } from 'react';
import { formatNumber } from '../lib/format';

/** The variables of a page: pass them straight into a connection query. */
export interface PageVars {
  first?: number;
  after?: string;
  last?: number;
  before?: string;
}

interface PageInfo {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor?: string | null;
  endCursor?: string | null;
}

/** Page state for a list of size rows per page; reset() goes back to the first page. */
export function usePager(size = 25) {
  const [vars, setVars] = useState<PageVars>({ first: size });
  return {
    vars,
    next: (pi: PageInfo) => pi.endCursor && setVars({ first: size, after: pi.endCursor }),
    prev: (pi: PageInfo) => pi.startCursor && setVars({ last: size, before: pi.startCursor }),
    reset: () => setVars({ first: size }),
  };
}

/** Previous/next buttons and the total for a connection. */
export function Pager({ pageInfo, total, pager }: { pageInfo?: PageInfo | null; total?: number; pager: ReturnType<typeof usePager> }) {
  if (!pageInfo) return null;
  return (
    <div className="pager">
      <button type="button" disabled={!pageInfo.hasPreviousPage} onClick={() => pager.prev(pageInfo)}>
        ‹ Previous
      </button>
      <button type="button" disabled={!pageInfo.hasNextPage} onClick={() => pager.next(pageInfo)}>
        Next ›
      </button>
      {total !== undefined && <span className="muted">{formatNumber(total)} in all</span>}
    </div>
  );
}
