// Chooses where the network map starts: search hosts/devices and networks by name; without a
// search, the fabric's gateway and spine routers and the first networks are suggested.
import { useEffect, useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { Loading } from '../Loading';
import { formatNumber } from '../../lib/format';

const PickerDocument = graphql(`
  query NetworkStartPicker($hosts: HostWhereInput, $networks: NetworkWhereInput) {
    hosts(first: 12, where: $hosts, orderBy: { field: NAME }) {
      totalCount
      edges { node { id name kind role } }
    }
    networks(first: 12, where: $networks, orderBy: { field: NAME }) {
      totalCount
      edges { node { id name cidr vlan purpose } }
    }
  }
`);

/** The search box and the matching starts, each a link to /network?from=<id>&depth=<depth>. */
export function StartPicker({ depth }: { depth: number }) {
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setQ(text.trim()), 250);
    return () => clearTimeout(t);
  }, [text]);
  const [{ data, fetching, error }] = useQuery({
    query: PickerDocument,
    variables: q
      ? { hosts: { nameContainsFold: q }, networks: { nameContainsFold: q } }
      : { hosts: { roleIn: ['GATEWAY_ROUTER', 'FLOOR_SPINE'] }, networks: {} },
  });
  const hosts = data?.hosts.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const networks = data?.networks.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const to = (id: string) => `/network?from=${encodeURIComponent(id)}&depth=${depth}`;
  return (
    <div className="netpicker card">
      <label>
        Start from a host, switch, router or network
        <input
          type="search"
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="Name contains… e.g. server01, leaf, mgmt"
          aria-label="Search hosts and networks"
          autoFocus
        />
      </label>
      <Problem error={error} />
      {fetching && !data && <Loading what="Searching" />}
      {data && (
        <div className="netpicker-results">
          <div>
            <h3>{q ? 'Hosts and devices' : 'Gateways and spines'} <span className="muted small">({formatNumber(data.hosts.totalCount)})</span></h3>
            {hosts.length === 0 ? (
              <p className="muted">No host matches “{q}”.</p>
            ) : (
              <ul>
                {hosts.map((h) => (
                  <li key={h.id}>
                    <Link to={to(h.id)}>{h.name}</Link>{' '}
                    <span className="muted small">{h.role ? h.role.replace(/_/g, ' ').toLowerCase() : h.kind.toLowerCase()}</span>
                  </li>
                ))}
              </ul>
            )}
          </div>
          <div>
            <h3>Networks <span className="muted small">({formatNumber(data.networks.totalCount)})</span></h3>
            {networks.length === 0 ? (
              <p className="muted">No network matches “{q}”.</p>
            ) : (
              <ul>
                {networks.map((n) => (
                  <li key={n.id}>
                    <Link to={to(n.id)}>{n.name}</Link>{' '}
                    <span className="muted small">
                      {n.cidr}
                      {n.vlan != null && ` · VLAN ${n.vlan}`} · {n.purpose.toLowerCase()}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
