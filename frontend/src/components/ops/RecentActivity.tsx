// The newest 15 audit log entries: who did what to which resource, and when.
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { Loading } from '../Loading';
import { RelTime } from './RelTime';
import { resourcePath, typeLabel } from '../../lib/ops/resources';

const RecentActivityDocument = graphql(`
  query OverviewRecentActivity {
    auditLogs(first: 15, orderBy: { field: CREATED_AT, direction: DESC }) {
      edges { node { id createdAt actor action objectType objectID } }
    }
  }
`);

export function RecentActivity() {
  const [{ data, error, fetching }] = useQuery({ query: RecentActivityDocument });
  if (error) return <Problem error={error} />;
  if (!data) return fetching ? <Loading /> : null;
  const rows = data.auditLogs.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  if (rows.length === 0) return <p className="muted">Nothing in the audit log yet.</p>;
  return (
    <table className="ops-table activity" aria-label="Recent activity">
      <colgroup><col style={{ width: '27%' }} /><col style={{ width: '31%' }} /><col style={{ width: '27%' }} /><col style={{ width: '15%' }} /></colgroup>
      <thead>
        <tr><th>Who</th><th>What</th><th>Resource</th><th>When</th></tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const to = resourcePath(r.objectType, r.objectID);
          const what = r.objectType ? `${typeLabel(r.objectType)} ${r.objectID ?? ''}` : '—';
          return (
            <tr key={r.id}>
              <td className="clip" title={r.actor}>{r.actor}</td>
              <td className="clip" title={r.action}>{r.action}</td>
              <td>{to ? <Link to={to}>{what}</Link> : <span className="muted">{what}</span>}</td>
              <td className="nowrap"><RelTime iso={r.createdAt} /></td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
