// /ipam/networks: every network with its prefix, VLAN, purpose and how full it is
// (utilization: allocated and reserved of the usable host addresses); create a network.
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { NetworkPurpose } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { UsageBar } from '../../components/UsageBar';
import { formatNumber } from '../../lib/format';
import './ipam.css';

const NetworksDocument = graphql(`
  query IPAMNetworks {
    networks(first: 200, orderBy: { field: NAME }) {
      totalCount
      edges {
        node {
          id
          name
          cidr
          vlan
          gateway
          purpose
          datacenter { id name }
          tenant { id name }
          utilization { usable allocated reserved free percentUsed }
        }
      }
    }
  }
`);
const CreateNetworkDocument = graphql(`
  mutation CreateNetwork($input: CreateNetworkInput!) {
    createNetwork(input: $input) { id }
  }
`);

const PURPOSES: NetworkPurpose[] = ['MANAGEMENT', 'SERVICE', 'VM', 'STORAGE'];

function NewNetworkForm() {
  const navigate = useNavigate();
  const [r, create] = useMutation(CreateNetworkDocument);
  const [name, setName] = useState('');
  const [cidr, setCidr] = useState('');
  const [gateway, setGateway] = useState('');
  const [vlan, setVlan] = useState('');
  const [purpose, setPurpose] = useState<NetworkPurpose>('VM');
  async function submit(e: FormEvent) {
    e.preventDefault();
    const v = vlan.trim() === '' ? undefined : Number(vlan);
    const res = await create({ input: { name: name.trim(), cidr: cidr.trim(), gateway: gateway.trim() || undefined, vlan: v, purpose } });
    if (res.data) navigate(`/ipam/networks/${res.data.createNetwork.id}`);
  }
  return (
    <form className="card" onSubmit={submit} aria-label="New network">
      <h3 style={{ marginTop: 0 }}>New network</h3>
      <div className="fields">
        <label>
          Name
          <input value={name} required onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Prefix (CIDR)
          <input value={cidr} required placeholder="10.20.0.0/24" onChange={(e) => setCidr(e.target.value)} />
        </label>
        <label>
          Gateway
          <input value={gateway} placeholder="10.20.0.1" onChange={(e) => setGateway(e.target.value)} />
        </label>
        <label>
          VLAN
          <input type="number" min={1} max={4094} value={vlan} onChange={(e) => setVlan(e.target.value)} />
        </label>
        <label>
          Purpose
          <select value={purpose} onChange={(e) => setPurpose(e.target.value as NetworkPurpose)}>
            {PURPOSES.map((p) => (
              <option key={p} value={p}>
                {p.toLowerCase()}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Problem error={r.error} />
      <div style={{ marginTop: '.75rem' }}>
        <button type="submit" className="primary" disabled={r.fetching}>
          Create network
        </button>
      </div>
    </form>
  );
}

export default function NetworksPage() {
  const [{ data, error, fetching }] = useQuery({ query: NetworksDocument });
  const [adding, setAdding] = useState(false);
  const nets = data?.networks.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <div>
      <div className="row">
        <h1>IP address management</h1>
        <button type="button" onClick={() => setAdding(!adding)} aria-expanded={adding}>
          New network
        </button>
      </div>
      {adding && <NewNetworkForm />}
      <Problem error={error} />
      {fetching && !data && <Loading />}
      {data && nets.length === 0 && <p className="muted">No networks are visible to you.</p>}
      {nets.length > 0 && (
        <table aria-label="Networks">
          <thead>
            <tr>
              <th>Network</th>
              <th>Prefix</th>
              <th>VLAN</th>
              <th>Purpose</th>
              <th>Where</th>
              <th>Used</th>
              <th>Free</th>
            </tr>
          </thead>
          <tbody>
            {nets.map((n) => (
              <tr key={n.id} data-testid="network" data-name={n.name}>
                <td>
                  <Link to={`/ipam/networks/${n.id}`}>{n.name}</Link>
                </td>
                <td>
                  <code>{n.cidr}</code>
                </td>
                <td>{n.vlan ?? '—'}</td>
                <td>{n.purpose.toLowerCase()}</td>
                <td className="small">{[n.datacenter?.name, n.tenant ? `tenant ${n.tenant.name}` : null].filter(Boolean).join(' · ') || '—'}</td>
                <td style={{ minWidth: 180 }}>
                  <UsageBar used={n.utilization.allocated + n.utilization.reserved} total={n.utilization.usable} />
                </td>
                <td>{formatNumber(n.utilization.free)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
