// Compute nodes: filters (status, schedulable, drain, cluster, name) kept in the URL, pages of 25,
// and live status through the nodeStatusChanged subscription.
import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { ComputeNodeWhereInput, ComputeNodeStatus, ComputeNodeDrainState } from '../../gql/graphql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { NodesTable } from '../../components/ops/NodesTable';
import { useLiveNodes } from '../../components/ops/useLiveNodes';
import { overlay } from '../../lib/ops/live';
import '../../components/ops/ops.css';

const NodesDocument = graphql(`
  query NodesList($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: ComputeNodeWhereInput) {
    computeNodes(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: NAME }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id updatedAt name status statusReason schedulable cordonReason drainState lastHeartbeatAt
          cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB
          cluster { id name }
          host { id name }
        }
      }
    }
  }
`);

const ClustersDocument = graphql(`
  query NodesClusterChoices {
    clusters(first: 200, orderBy: { field: NAME }) { edges { node { id name } } }
  }
`);

const STATUSES = ['READY', 'NOT_READY', 'DOWN', 'UNKNOWN'];

export default function NodesPage() {
  const [params, setParams] = useSearchParams();
  const pager = usePager(25);
  const status = params.get('status') ?? '';
  const schedulable = params.get('schedulable') ?? '';
  const drain = params.get('drain') ?? '';
  const cluster = params.get('cluster') ?? '';
  const name = params.get('name') ?? '';

  const where: ComputeNodeWhereInput = {};
  if (status) where.status = status as ComputeNodeStatus;
  if (schedulable) where.schedulable = schedulable === 'true';
  if (drain) where.drainState = drain as ComputeNodeDrainState;
  if (cluster) where.hasClusterWith = [{ id: cluster }];
  if (name) where.nameContains = name;

  const [{ data, error, fetching }] = useQuery({ query: NodesDocument, variables: { ...pager.vars, where } });
  const [clusters] = useQuery({ query: ClustersDocument });
  const shown = useMemo(() => new Set(data?.computeNodes.edges?.flatMap((e) => (e?.node ? [e.node.id] : [])) ?? []), [data]);
  const live = useLiveNodes(cluster || undefined, undefined, shown);

  function set(key: string, value: string) {
    const p = new URLSearchParams(params);
    if (value) p.set(key, value);
    else p.delete(key);
    setParams(p, { replace: true });
    pager.reset();
  }

  const rows = data?.computeNodes.edges?.flatMap((e) => (e?.node ? [overlay(e.node, live[e.node.id])] : [])) ?? [];
  return (
    <div>
      <h1>Nodes</h1>
      <div className="filters" role="search">
        <label>
          Status
          <select value={status} onChange={(e) => set('status', e.target.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => <option key={s} value={s}>{s.replace('_', ' ').toLowerCase()}</option>)}
          </select>
        </label>
        <label>
          Scheduling
          <select value={schedulable} onChange={(e) => set('schedulable', e.target.value)}>
            <option value="">any</option>
            <option value="true">schedulable</option>
            <option value="false">cordoned</option>
          </select>
        </label>
        <label>
          Drain
          <select value={drain} onChange={(e) => set('drain', e.target.value)}>
            <option value="">any</option>
            <option value="DRAINING">draining</option>
            <option value="DRAINED">drained</option>
            <option value="FAILED">failed</option>
          </select>
        </label>
        <label>
          Cluster
          <select value={cluster} onChange={(e) => set('cluster', e.target.value)}>
            <option value="">any</option>
            {clusters.data?.clusters.edges?.map((e) => e?.node && <option key={e.node.id} value={e.node.id}>{e.node.name}</option>)}
          </select>
        </label>
        <label>
          Name contains
          <input type="search" defaultValue={name} onKeyDown={(e) => e.key === 'Enter' && set('name', e.currentTarget.value)} onBlur={(e) => e.currentTarget.value !== name && set('name', e.currentTarget.value)} />
        </label>
      </div>
      <Problem error={error ?? clusters.error} />
      {!data && fetching && <Loading />}
      {data && rows.length === 0 && <p className="muted">No nodes match these filters.</p>}
      {rows.length > 0 && <NodesTable rows={rows} />}
      <Pager pageInfo={data?.computeNodes.pageInfo} total={data?.computeNodes.totalCount} pager={pager} />
    </div>
  );
}
