// Maintainers and maintainer groups, with what each is responsible for (racks, hosts, nodes,
// clusters, VMs, Kubernetes clusters) linked to those pages.
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { Responsibilities } from '../../components/ops/Responsibilities';
import '../../components/ops/ops.css';
import { formatNumber } from '../../lib/format';

const MaintainersDocument = graphql(`
  query MaintainersPage {
    maintainerGroups(first: 100, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name description status
          admin { id name }
          members(first: 50) { totalCount edges { node { id name } } }
          racks(first: 5) { totalCount edges { node { id name } } }
          hosts(first: 5) { totalCount edges { node { id name } } }
          nodes(first: 5) { totalCount edges { node { id name } } }
          clusters(first: 5) { totalCount edges { node { id name } } }
          virtualMachines(first: 5) { totalCount edges { node { id name } } }
          kubernetesClusters(first: 5) { totalCount edges { node { id name } } }
        }
      }
    }
    maintainers(first: 200, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id name account email status
          groups(first: 20) { edges { node { id name } } }
          racks(first: 5) { totalCount edges { node { id name } } }
          hosts(first: 5) { totalCount edges { node { id name } } }
          nodes(first: 5) { totalCount edges { node { id name } } }
          clusters(first: 5) { totalCount edges { node { id name } } }
          virtualMachines(first: 5) { totalCount edges { node { id name } } }
          kubernetesClusters(first: 5) { totalCount edges { node { id name } } }
        }
      }
    }
  }
`);

export default function MaintainersPage() {
  const [{ data, error, fetching }] = useQuery({ query: MaintainersDocument });
  if (error) return <><h1>Maintainers</h1><Problem error={error} /></>;
  if (!data) return fetching ? <Loading /> : null;
  const groups = data.maintainerGroups.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const people = data.maintainers.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <h1>Maintainers</h1>
      <h2>Groups ({formatNumber(data.maintainerGroups.totalCount)})</h2>
      {groups.length === 0 ? <p className="muted">No maintainer groups.</p> : (
        <table className="ops-table" aria-label="Maintainer groups">
          <thead><tr><th>Group</th><th>Admin</th><th>Members</th><th>Responsible for</th></tr></thead>
          <tbody>
            {groups.map((g) => (
              <tr key={g.id} id={`group-${g.id}`}>
                <td>
                  <strong>{g.name}</strong> {g.status !== 'ACTIVE' && <StatusBadge status={g.status} />}
                  {g.description && <div className="muted small">{g.description}</div>}
                </td>
                <td>{g.admin ? <a href={`#maintainer-${g.admin.id}`}>{g.admin.name}</a> : <span className="muted">—</span>}</td>
                <td>{g.members.edges?.flatMap((e) => (e?.node ? [e.node] : [])).map((m, i) => <span key={m.id}>{i > 0 && ', '}<a href={`#maintainer-${m.id}`}>{m.name}</a></span>)}{g.members.totalCount === 0 && <span className="muted">none</span>}</td>
                <td><Responsibilities of={g} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>People ({formatNumber(data.maintainers.totalCount)})</h2>
      {people.length === 0 ? <p className="muted">No maintainers.</p> : (
        <table className="ops-table" aria-label="Maintainers">
          <thead><tr><th>Maintainer</th><th>Account</th><th>Groups</th><th>Directly responsible for</th></tr></thead>
          <tbody>
            {people.map((m) => (
              <tr key={m.id} id={`maintainer-${m.id}`}>
                <td>
                  <strong>{m.name}</strong> {m.status !== 'ACTIVE' && <StatusBadge status={m.status} />}
                  {m.email && <div className="small"><a href={`mailto:${m.email}`}>{m.email}</a></div>}
                </td>
                <td><code>{m.account}</code></td>
                <td>{m.groups.edges?.flatMap((e) => (e?.node ? [e.node] : [])).map((g, i) => <span key={g.id}>{i > 0 && ', '}<a href={`#group-${g.id}`}>{g.name}</a></span>)}</td>
                <td><Responsibilities of={m} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
