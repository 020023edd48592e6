// /kubernetes/:id: one Kubernetes cluster: status and its reason, phase, API endpoint and
// VIP, service mesh and its status, progress (nodes ready / total) and every node with its
// role, index, version, VM, state, last bootstrap step and failing reason; scale workers,
// upgrade, delete, and the kubeconfig download for those who may read it (the tenant's
// admins, operators and admins: for others the kubeconfig field is FORBIDDEN and the button
// is not shown). Refreshed every 2 s while the page is open, as the list is.
import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDateTime } from '../../lib/format';
import { nodesReady } from './KubernetesClustersPage';
import '../../components/compute/compute.css';
import './kubernetes.css';

const ClusterDocument = graphql(`
  query KubernetesCluster($id: ID!) {
    node(id: $id) {
      ... on KubernetesCluster {
        id name version status statusReason phase apiEndpoint apiVip
        controlPlaneCount workerCount bastionEnabled plugins podCidr serviceCidr serviceMeshStatus createdAt
        tenant { id name }
        region { id name }
        serviceMesh { id name type }
        nodes { name role index version vmID state step reason updatedAt }
      }
    }
  }
`);

// Asked apart: FORBIDDEN for those who may not read it, which hides the download.
const KubeconfigDocument = graphql(`
  query KubernetesKubeconfig($id: ID!) {
    node(id: $id) { ... on KubernetesCluster { id kubeconfig } }
  }
`);

const ScaleDocument = graphql(`
  mutation ScaleKubernetesCluster($id: ID!, $workers: Int!) {
    scaleKubernetesCluster(id: $id, workers: $workers) { id workerCount status statusReason }
  }
`);

const UpgradeDocument = graphql(`
  mutation UpgradeKubernetesCluster($id: ID!, $version: String!) {
    upgradeKubernetesCluster(id: $id, version: $version) { id version status statusReason }
  }
`);

const DeleteDocument = graphql(`
  mutation DeleteKubernetesCluster($id: ID!) { deleteKubernetesCluster(id: $id) }
`);

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'application/yaml' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.click();
  URL.revokeObjectURL(url);
}

export default function KubernetesClusterPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [{ data, error, fetching }, refetch] = useQuery({ query: ClusterDocument, variables: { id } });
  useEffect(() => {
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 2000);
    return () => clearInterval(t);
  }, [refetch]);
  const c = data?.node?.__typename === 'KubernetesCluster' ? data.node : null;
  // The PKI exists from the bootstrap on; the kubeconfig is read once then (each read is
  // audited), and its download offered when the read succeeded.
  const hasPKI = !!c?.apiEndpoint && (c.phase === 'BOOTSTRAPPING' || c.phase === 'READY');
  const [kc] = useQuery({ query: KubeconfigDocument, variables: { id }, pause: !hasPKI });
  const kubeconfig = kc.data?.node?.__typename === 'KubernetesCluster' ? kc.data.node.kubeconfig : null;
  const [scale, doScale] = useMutation(ScaleDocument);
  const [upgrade, doUpgrade] = useMutation(UpgradeDocument);
  const [del, doDelete] = useMutation(DeleteDocument);
  const [workers, setWorkers] = useState<number | null>(null);
  const [version, setVersion] = useState('');

  if (!data && fetching) return <Loading what="Loading the Kubernetes cluster" />;
  if (!c) return <div><Problem error={error} />{data && <p>No such Kubernetes cluster.</p>}</div>;

  async function submitScale(e: FormEvent) {
    e.preventDefault();
    if (workers === null) return;
    const r = await doScale({ id, workers });
    if (!r.error) setWorkers(null);
  }
  async function submitUpgrade(e: FormEvent) {
    e.preventDefault();
    const r = await doUpgrade({ id, version: version.trim() });
    if (!r.error) setVersion('');
  }
  async function remove() {
    if (!c || !window.confirm(`Delete Kubernetes cluster ${c.name}? Its VMs, API VIP and PKI are removed.`)) return;
    const r = await doDelete({ id });
    if (!r.error) navigate('/kubernetes');
  }

  const nodes = c.nodes ?? [];
  return (
    <div>
      <div className="spread">
        <h1>{c.name} <StatusBadge status={c.status} title={c.statusReason} /></h1>
        <button type="button" className="danger" onClick={remove} disabled={del.fetching || c.status === 'DELETING'}>Delete</button>
      </div>
      <Problem error={error} />
      <Problem error={del.error} />
      <dl className="dl">
        <dt>Status reason</dt><dd data-testid="status-reason">{c.statusReason ?? '—'}</dd>
        <dt>Phase</dt><dd data-testid="phase">{c.phase.toLowerCase()}</dd>
        <dt>Progress</dt><dd data-testid="progress">{nodesReady(nodes)} nodes ready</dd>
        <dt>Tenant</dt><dd><Link to={`/tenants/${c.tenant.id}`}>{c.tenant.name}</Link></dd>
        <dt>Region</dt><dd>{c.region.name}</dd>
        <dt>Version</dt><dd data-testid="version">{c.version}</dd>
        <dt>Control planes / workers</dt><dd>{c.controlPlaneCount} / <span data-testid="worker-count">{c.workerCount}</span>{c.bastionEnabled ? ' + bastion' : ''}</dd>
        <dt>API endpoint</dt><dd data-testid="api-endpoint">{c.apiEndpoint ?? '—'}{c.apiVip ? ` (VIP ${c.apiVip})` : ''}</dd>
        <dt>Plugins</dt><dd>{(c.plugins ?? []).join(', ') || '—'}</dd>
        <dt>Pod / service CIDR</dt><dd>{c.podCidr} / {c.serviceCidr}</dd>
        <dt>Service mesh</dt>
        <dd data-testid="mesh">{c.serviceMesh ? <>{c.serviceMesh.name} ({c.serviceMesh.type.toLowerCase()}) <StatusBadge status={c.serviceMeshStatus} /></> : 'none'}</dd>
        <dt>Created</dt><dd>{formatDateTime(c.createdAt)}</dd>
      </dl>

      {kubeconfig && (
        <p>
          <button type="button" data-testid="kubeconfig-download" onClick={() => download(`${c.name}.kubeconfig`, kubeconfig)}>
            Download kubeconfig
          </button>{' '}
          <span className="muted small">admin credentials; every read is audited</span>
        </p>
      )}

      <h2>Nodes</h2>
      <table aria-label="Nodes">
        <thead><tr><th>Name</th><th>Role</th><th>Index</th><th>Version</th><th>VM</th><th>State</th><th>Step</th><th>Reason</th><th>Updated</th></tr></thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.name} data-node-name={n.name} data-state={n.state}>
              <td>{n.name}</td>
              <td>{n.role.toLowerCase().replace('_', ' ')}</td>
              <td>{n.index}</td>
              <td>{n.version}</td>
              <td>{n.vmID ? <Link to={`/vms/${n.vmID}`}>VM {n.vmID}</Link> : '—'}</td>
              <td><StatusBadge status={n.state} title={n.reason} /></td>
              <td className="small">{n.step ?? '—'}</td>
              <td className="small">{n.reason ?? ''}</td>
              <td className="small nowrap">{formatDateTime(n.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Day two</h2>
      <form className="k8s-day2" onSubmit={submitScale} aria-label="Scale workers">
        <label>Workers<input type="number" min={0} max={100} value={workers ?? c.workerCount} onChange={(e) => setWorkers(Number(e.target.value))} /></label>
        <button type="submit" disabled={scale.fetching || workers === null || workers === c.workerCount}>Scale</button>
      </form>
      <Problem error={scale.error} />
      <form className="k8s-day2" onSubmit={submitUpgrade} aria-label="Upgrade version">
        <label>New version<input value={version} placeholder={c.version} onChange={(e) => setVersion(e.target.value)} /></label>
        <button type="submit" disabled={upgrade.fetching || !version.trim()}>Upgrade</button>
      </form>
      <Problem error={upgrade.error} />
    </div>
  );
}
