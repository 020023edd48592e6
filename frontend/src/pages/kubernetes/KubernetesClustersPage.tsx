// /kubernetes: tenants' Kubernetes clusters (name, tenant, region, version, status, phase,
// nodes ready/total), refreshed every 2 s while the page is open (the clusters have no
// subscription: their workflow runs in the worker); a form creates one.
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { CreateKubernetesClusterInput } from '../../gql/graphql';
import { Loading } from '../../components/Loading';
import { Message, Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { ChoiceSelect } from '../../components/ChoiceSelect';
import { describeFlavor, describeImage, edgeNodes, imageUnusable, useChoices } from '../../components/compute/choices';
import { formatDateTime } from '../../lib/format';
import '../../components/compute/compute.css';

const ClustersDocument = graphql(`
  query KubernetesClusters {
    kubernetesClusters(first: 200, orderBy: { field: CREATED_AT, direction: DESC }) {
      totalCount
      edges {
        node {
          id name version status statusReason phase createdAt
          tenant { id name }
          region { id name }
          nodes { name state }
        }
      }
    }
  }
`);

const MeshesDocument = graphql(`
  query KubernetesMeshChoices {
    serviceMeshes(first: 100) { edges { node { id name type } } }
  }
`);

const CreateClusterDocument = graphql(`
  mutation CreateKubernetesCluster($input: CreateKubernetesClusterInput!) {
    createKubernetesCluster(input: $input) { id name status }
  }
`);

/** "ready / total" of a cluster's nodes. */
export function nodesReady(nodes: { state: string }[] | null | undefined): string {
  const all = nodes ?? [];
  return `${all.filter((n) => n.state === 'READY').length} / ${all.length}`;
}

const plugins = ['calico', 'flannel', 'cilium'];

function CreateClusterForm({ onCreated, onCancel }: { onCreated: (id: string) => void; onCancel: () => void }) {
  const choices = useChoices();
  const [{ data: meshData }] = useQuery({ query: MeshesDocument });
  const meshes = edgeNodes(meshData?.serviceMeshes).filter((m) => m.type === 'ISTIO' || m.type === 'LINKERD');
  const [create, doCreate] = useMutation(CreateClusterDocument);
  const [name, setName] = useState('');
  const [tenantID, setTenant] = useState('');
  const [regionID, setRegion] = useState('');
  const [flavorID, setFlavor] = useState('');
  const [imageID, setImage] = useState('');
  const [version, setVersion] = useState('v1.31.2');
  const [controlPlanes, setControlPlanes] = useState(1);
  const [workers, setWorkers] = useState(2);
  const [bastion, setBastion] = useState(false);
  const [cni, setCni] = useState('calico');
  const [metricsServer, setMetricsServer] = useState(false);
  const [meshID, setMesh] = useState('');
  const [formError, setFormError] = useState('');

  async function submit(e: FormEvent) {
    e.preventDefault();
    setFormError('');
    if (!name.trim() || !tenantID || !regionID || !flavorID) {
      setFormError('Give a name and choose a tenant, a region and a flavor.');
      return;
    }
    const input: CreateKubernetesClusterInput = {
      name: name.trim(), tenantID, regionID, flavorID, version: version.trim(),
      controlPlaneCount: controlPlanes, workerCount: workers, bastionEnabled: bastion,
      plugins: metricsServer ? [cni, 'metrics-server'] : [cni],
    };
    if (imageID) input.imageID = imageID;
    if (meshID) input.serviceMeshID = meshID;
    const r = await doCreate({ input });
    if (r.data?.createKubernetesCluster) onCreated(r.data.createKubernetesCluster.id);
  }

  return (
    <form className="form-section" onSubmit={submit} aria-label="Create Kubernetes cluster">
      <h2>New Kubernetes cluster</h2>
      <Problem error={choices.error} />
      <label>Name<input value={name} onChange={(e) => setName(e.target.value)} required /></label>
      <ChoiceSelect label="Tenant" value={tenantID} onChange={setTenant} options={choices.tenants} empty="choose…" />
      <ChoiceSelect label="Region" value={regionID} onChange={setRegion} options={choices.regions} empty="choose…" />
      <label>Flavor
        <select value={flavorID} onChange={(e) => setFlavor(e.target.value)}>
          <option value="">choose…</option>
          {choices.flavors.map((f) => <option key={f.id} value={f.id}>{describeFlavor(f)}</option>)}
        </select>
      </label>
      <label>Image
        <select value={imageID} onChange={(e) => setImage(e.target.value)}>
          <option value="">none (the bootstrap installs kubeadm)</option>
          {choices.images.map((i) => <option key={i.id} value={i.id} disabled={imageUnusable(i)}>{describeImage(i)}</option>)}
        </select>
      </label>
      <label>Version<input value={version} onChange={(e) => setVersion(e.target.value)} required /></label>
      <label>Control planes<input type="number" min={1} max={7} value={controlPlanes} onChange={(e) => setControlPlanes(Number(e.target.value))} /></label>
      <label>Workers<input type="number" min={0} max={100} value={workers} onChange={(e) => setWorkers(Number(e.target.value))} /></label>
      <label className="check"><input type="checkbox" checked={bastion} onChange={(e) => setBastion(e.target.checked)} />Bastion</label>
      <label>Network plugin
        <select value={cni} onChange={(e) => setCni(e.target.value)}>
          {plugins.map((p) => <option key={p} value={p}>{p}</option>)}
        </select>
      </label>
      <label className="check"><input type="checkbox" checked={metricsServer} onChange={(e) => setMetricsServer(e.target.checked)} />metrics-server add-on</label>
      <label>Service mesh
        <select value={meshID} onChange={(e) => setMesh(e.target.value)}>
          <option value="">none</option>
          {meshes.map((m) => <option key={m.id} value={m.id}>{m.name} ({m.type.toLowerCase()})</option>)}
        </select>
      </label>
      {formError && <Message kind="error">{formError}</Message>}
      <Problem error={create.error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={create.fetching}>Create cluster</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  );
}

export default function KubernetesClustersPage() {
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [{ data, error, fetching }, refetch] = useQuery({ query: ClustersDocument });
  useEffect(() => {
    const t = setInterval(() => refetch({ requestPolicy: 'network-only' }), 2000);
    return () => clearInterval(t);
  }, [refetch]);
  const rows = useMemo(() => edgeNodes(data?.kubernetesClusters), [data]);

  return (
    <div>
      <div className="spread">
        <h1>Kubernetes clusters</h1>
        {!creating && <button type="button" className="primary" onClick={() => setCreating(true)}>Create cluster</button>}
      </div>
      {creating && <CreateClusterForm onCreated={(id) => navigate(`/kubernetes/${id}`)} onCancel={() => setCreating(false)} />}
      <Problem error={error} />
      {!data && fetching && <Loading what="Loading Kubernetes clusters" />}
      {data && rows.length === 0 && <p className="muted">No Kubernetes clusters yet.</p>}
      {rows.length > 0 && (
        <table aria-label="Kubernetes clusters">
          <thead><tr><th>Name</th><th>Tenant</th><th>Region</th><th>Version</th><th>Status</th><th>Phase</th><th>Nodes ready</th><th>Created</th></tr></thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.id} data-cluster-id={c.id}>
                <td><Link to={`/kubernetes/${c.id}`}>{c.name}</Link></td>
                <td><Link to={`/tenants/${c.tenant.id}`}>{c.tenant.name}</Link></td>
                <td>{c.region.name}</td>
                <td>{c.version}</td>
                <td><StatusBadge status={c.status} title={c.statusReason} /></td>
                <td className="small">{c.phase.toLowerCase()}</td>
                <td data-testid="nodes-ready">{nodesReady(c.nodes)}</td>
                <td className="small nowrap">{formatDateTime(c.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
