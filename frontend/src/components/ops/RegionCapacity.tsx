// Regions with their datacenters and the compute capacity used/free of each: a datacenter's
// capacity is the sum over its clusters (datacenterView), a region's the sum of its datacenters.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { Loading } from '../Loading';
import { UsageBar } from '../UsageBar';
import { StatusBadge } from '../StatusBadge';
import { capsByRegion, sumCaps, type Cap, type DatacenterCap } from '../../lib/ops/capacity';
import { CapacityBars } from './CapacityBars';

const RegionsDocument = graphql(`
  query OverviewRegions {
    regions(first: 100) {
      edges { node { id name status datacenters(first: 100) { edges { node { id name } } } } }
    }
  }
`);

const DatacenterCapDocument = graphql(`
  query OverviewDatacenterCapacity($id: ID!) {
    datacenterView(id: $id) {
      id
      clusters {
        id
        capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB }
      }
    }
  }
`);

export function RegionCapacity() {
  const [{ data, error, fetching }] = useQuery({ query: RegionsDocument });
  const [caps, setCaps] = useState<Record<string, DatacenterCap>>({});
  const report = useCallback((d: DatacenterCap) => setCaps((c) => (c[d.id] && sameCap(c[d.id].cap, d.cap) ? c : { ...c, [d.id]: d })), []);
  if (error) return <Problem error={error} />;
  if (!data) return fetching ? <Loading /> : null;
  const regions = data.regions.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  if (regions.length === 0) return <p className="muted">No regions yet.</p>;
  const byRegion = capsByRegion(Object.values(caps));
  return (
    <div className="grid" style={{ gridTemplateColumns: '1fr' }}>
      {regions.map((r) => {
        const dcs = r.datacenters.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
        const total = byRegion.get(r.id);
        return (
          <div className="card region-card" key={r.id} data-testid={`region-${r.name}`}>
            <div className="spread">
              <h3>{r.name}</h3>
              {r.status === 'OPEN' ? <span className="muted small">open</span> : <StatusBadge status={r.status} />}
            </div>
            {total ? <CapacityBars cap={total} /> : <span className="muted small">summing capacity…</span>}
            {dcs.length === 0 && <p className="muted small">No datacenters in this region.</p>}
            {dcs.map((d) => (
              <DatacenterCapacity key={d.id} id={d.id} name={d.name} regionId={r.id} report={report} />
            ))}
          </div>
        );
      })}
    </div>
  );
}

function sameCap(a: Cap, b: Cap): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** One datacenter's capacity; reports it up so the region can show the sum. */
function DatacenterCapacity({ id, name, regionId, report }: { id: string; name: string; regionId: string; report: (d: DatacenterCap) => void }) {
  const [{ data, error }] = useQuery({ query: DatacenterCapDocument, variables: { id } });
  const cap = useMemo(() => (data ? sumCaps(data.datacenterView.clusters.map((c) => c.capacity)) : null), [data]);
  useEffect(() => {
    if (cap) report({ id, regionId, cap });
  }, [cap, id, regionId, report]);
  return (
    <div className="dc">
      <Link to={`/datacenters/${id}`}>{name}</Link>
      <Problem error={error} />
      {cap && (
        <>
          <span className="muted small"> · {cap.readyNodes}/{cap.nodes} nodes ready</span>
          <UsageBar label="vCPUs" used={cap.cpuAllocated} total={cap.cpuCapacity} />
        </>
      )}
    </div>
  );
}
