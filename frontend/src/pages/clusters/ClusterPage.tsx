// /clusters/<id>: the cluster's virtual rack (clusterView), kept live by the VM and node status
// subscriptions for this cluster.
import { useEffect, useMemo, useState } from 'react';
import { Link, useParams } from 'react-router';
import { useClient, useQuery } from 'urql';
import type { CombinedError } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { UsageBar } from '../../components/UsageBar';
import { VirtualRack, VirtualRackLegend } from '../../components/compute/VirtualRack';
import { applyNodeEvent, applyVMEvent, countByStatus, type RackNode } from '../../lib/compute/rack';
import '../../components/compute/compute.css';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { formatNumber } from '../../lib/format';

const ClusterViewDocument = graphql(`
  query ClusterView($id: ID!) {
    clusterView(id: $id) {
      cluster {
        id name vmCount
        capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB }
      }
      nodes {
        node { id name status cordoned cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB vmCount }
        hostID hostName rackID rackName
        vms { id name status tenantID tenantName flavorName vcpus memoryMB }
      }
    }
  }
`);

const RackVMDocument = graphql(`
  subscription RackVMChanged($clusterID: ID!) {
    virtualMachineStatusChanged(clusterID: $clusterID) {
      id name status
      tenant { id name }
      flavor { name vcpus memoryMB }
      node { id }
      cluster { id }
    }
  }
`);

const RackNodeDocument = graphql(`
  subscription RackNodeChanged($clusterID: ID!) {
    nodeStatusChanged(clusterID: $clusterID) {
      id status schedulable cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB
    }
  }
`);

export default function ClusterPage() {
  const { id = '' } = useParams();
  const client = useClient();
  const [{ data, error, fetching }] = useQuery({ query: ClusterViewDocument, variables: { id } });
  // The nodes as loaded, then as live events change them; a new load starts over (set while
  // rendering, React's way to reset state when an input changes).
  const [nodes, setNodes] = useState<RackNode[] | null>(data?.clusterView?.nodes ?? null);
  const [loaded, setLoaded] = useState(data);
  const [liveError, setLiveError] = useState<CombinedError | null>(null);
  const [onlyBusy, setOnlyBusy] = useState(false);

  if (data !== loaded) {
    setLoaded(data);
    if (data?.clusterView) setNodes(data.clusterView.nodes);
  }

  useEffect(() => {
    const vms = client.subscription(RackVMDocument, { clusterID: id }).subscribe((r) => {
      if (r.error) setLiveError(r.error);
      const ev = r.data?.virtualMachineStatusChanged;
      if (ev) setNodes((ns) => (ns ? applyVMEvent(ns, ev, id) : ns));
    });
    const nodeSub = client.subscription(RackNodeDocument, { clusterID: id }).subscribe((r) => {
      if (r.error) setLiveError(r.error);
      const ev = r.data?.nodeStatusChanged;
      if (ev) setNodes((ns) => (ns ? applyNodeEvent(ns, ev) : ns));
    });
    return () => {
      vms.unsubscribe();
      nodeSub.unsubscribe();
    };
  }, [client, id]);

  const counts = useMemo(() => countByStatus(nodes ?? []), [nodes]);
  if (error) return <Problem error={error} title="The cluster could not be loaded" />;
  if (!data && fetching) return <Loading what="Loading the cluster" />;
  if (!data?.clusterView || !nodes) return <Loading />;
  const { cluster } = data.clusterView;
  const cap = cluster.capacity;
  const cpuUsed = nodes.reduce((s, n) => s + n.node.cpuAllocated, 0);
  const memUsed = nodes.reduce((s, n) => s + n.node.memoryAllocatedMB, 0);
  const vmTotal = nodes.reduce((s, n) => s + n.vms.length, 0);
  const shown = onlyBusy ? nodes.filter((n) => n.vms.length > 0 || n.node.status !== 'READY' || n.node.cordoned) : nodes;

  return (
    <div>
      <div className="breadcrumbs"><Link to="/clusters">Clusters</Link><span>{cluster.name}</span></div>
      <div className="spread">
        <h1>{cluster.name} <span className="muted small">virtual rack</span></h1>
        <HistoryLink type="Cluster" id={cluster.id} />
        <span className="muted small"><span className={`live-dot${liveError ? ' off' : ''}`} />{liveError ? 'not live' : 'live'}</span>
      </div>
      <Problem error={liveError} title="Live updates stopped" />
      <div className="grid">
        <div className="card">
          <div className="stat" data-testid="vm-total">{formatNumber(vmTotal)} VMs</div>
          <div className="muted">
            on {cap.nodes} nodes ({cap.readyNodes} ready) ·{' '}
            {Object.entries(counts).map(([s, c]) => `${c} ${s.toLowerCase()}`).join(', ') || 'none'}
          </div>
        </div>
        <div className="card">
          <UsageBar label="vCPU" used={cpuUsed} total={cap.cpuCapacity} />
          <UsageBar label="Memory" used={memUsed} total={cap.memoryCapacityMB} size="MiB" />
          <UsageBar label="Disk" used={cap.diskAllocatedGB} total={cap.diskCapacityGB} size="GiB" />
        </div>
      </div>
      <div className="spread" style={{ margin: '.75rem 0' }}>
        <VirtualRackLegend />
        <label className="row" style={{ flexDirection: 'row' }}>
          <input type="checkbox" checked={onlyBusy} onChange={(e) => setOnlyBusy(e.target.checked)} /> only nodes with VMs or problems
        </label>
      </div>
      <VirtualRack nodes={shown} />
    </div>
  );
}
