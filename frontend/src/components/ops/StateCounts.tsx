// Nodes by state and open alerts by severity: one aliased totalCount query each.
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { CountTile } from './CountTile';

const NodeCountsDocument = graphql(`
  query OverviewNodeCounts {
    all: computeNodes { totalCount }
    ready: computeNodes(where: { status: READY }) { totalCount }
    notReady: computeNodes(where: { status: NOT_READY }) { totalCount }
    down: computeNodes(where: { status: DOWN }) { totalCount }
    unknown: computeNodes(where: { status: UNKNOWN }) { totalCount }
    cordoned: computeNodes(where: { schedulable: false }) { totalCount }
    draining: computeNodes(where: { drainState: DRAINING }) { totalCount }
  }
`);

const AlertCountsDocument = graphql(`
  query OverviewAlertCounts {
    fatal: alerts(where: { status: OPEN, severity: FATAL }) { totalCount }
    critical: alerts(where: { status: OPEN, severity: CRITICAL }) { totalCount }
    warning: alerts(where: { status: OPEN, severity: WARNING }) { totalCount }
  }
`);

/** Node counts: all, by status, cordoned and draining. */
export function NodeCounts() {
  const [{ data, error }] = useQuery({ query: NodeCountsDocument });
  if (error && !data) return <Problem error={error} />;
  return (
    <>
      <Problem error={error} />
      <div className="count-row" aria-label="Nodes by state">
        <CountTile label="all nodes" count={data?.all.totalCount} to="/nodes" testid="nodes-all" />
        <CountTile label="ready" count={data?.ready.totalCount} to="/nodes?status=READY" tone="ok" testid="nodes-READY" />
        <CountTile label="not ready" count={data?.notReady.totalCount} to="/nodes?status=NOT_READY" tone="warn" testid="nodes-NOT_READY" />
        <CountTile label="down" count={data?.down.totalCount} to="/nodes?status=DOWN" tone="bad" testid="nodes-DOWN" />
        <CountTile label="unknown" count={data?.unknown.totalCount} to="/nodes?status=UNKNOWN" testid="nodes-UNKNOWN" />
        <CountTile label="cordoned" count={data?.cordoned.totalCount} to="/nodes?schedulable=false" tone="warn" testid="nodes-cordoned" />
        <CountTile label="draining" count={data?.draining.totalCount} to="/nodes?drain=DRAINING" tone="busy" testid="nodes-draining" />
      </div>
    </>
  );
}

/** Open alerts per severity. */
export function AlertCounts() {
  const [{ data, error }] = useQuery({ query: AlertCountsDocument });
  if (error && !data) return <Problem error={error} />;
  return (
    <>
      <Problem error={error} />
      <div className="count-row" aria-label="Open alerts by severity">
        <CountTile label="fatal" count={data?.fatal.totalCount} to="/alerts?status=OPEN&severity=FATAL" tone="bad" testid="alerts-FATAL" />
        <CountTile label="critical" count={data?.critical.totalCount} to="/alerts?status=OPEN&severity=CRITICAL" tone="bad" testid="alerts-CRITICAL" />
        <CountTile label="warning" count={data?.warning.totalCount} to="/alerts?status=OPEN&severity=WARNING" tone="warn" testid="alerts-WARNING" />
      </div>
    </>
  );
}
