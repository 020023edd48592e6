// /datacenters: every region with its datacenters and their capacity (datacenterView per
// datacenter), each linking to /datacenters/<id>.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { UsageBar } from '../../components/UsageBar';
import { sumFloors } from './capacity';
import { NewDatacenterForm } from '../../components/dcim/forms';
import './datacenters.css';

const RegionsDocument = graphql(`
  query DatacenterRegions {
    regions(first: 100) {
      edges {
        node {
          id
          name
          status
          datacenters(first: 100) {
            edges { node { id name building phase } }
          }
        }
      }
    }
  }
`);

export const DatacenterCapacityDocument = graphql(`
  query DatacenterCapacity($id: ID!) {
    datacenterView(id: $id) {
      id
      name
      regionName
      floors {
        id
        name
        racks
        usedUnits
        totalUnits
        hosts
        capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB diskCapacityGB diskAllocatedGB }
        alerts { fatal critical warning worst }
      }
      clusters { id name vmCount capacity { nodes readyNodes cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB } }
    }
  }
`);

function DatacenterCard({ id, name, building, phase }: { id: string; name: string; building?: string | null; phase?: string | null }) {
  const [{ data, error, fetching }] = useQuery({ query: DatacenterCapacityDocument, variables: { id } });
  const v = data?.datacenterView;
  const s = v ? sumFloors(v.floors) : null;
  return (
    <div className="card dc-card" data-testid="datacenter">
      <div className="spread">
        <h3>
          <Link to={`/datacenters/${id}`}>{name}</Link>
        </h3>
        {phase && <span className="muted small">{phase}</span>}
      </div>
      {building && <div className="muted small">{building}</div>}
      {fetching && !v && <Loading what="Loading capacity" />}
      <Problem error={error} />
      {v && s && (
        <div className="dc-stats">
          <div className="small">
            {v.floors.length} floor{v.floors.length === 1 ? '' : 's'} · {s.racks} racks · {s.hosts} devices · {s.readyNodes}/{s.nodes} nodes ready
          </div>
          <UsageBar label="Rack units" used={s.usedUnits} total={s.totalUnits} unit="U" />
          <UsageBar label="vCPU" used={s.cpuAllocated} total={s.cpuCapacity} />
          <UsageBar label="Memory" used={s.memoryAllocatedMB} total={s.memoryCapacityMB} size="MiB" />
        </div>
      )}
    </div>
  );
}

export default function DatacentersPage() {
  const [{ data, error, fetching }] = useQuery({ query: RegionsDocument });
  const regions = data?.regions.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const navigate = useNavigate();
  const [adding, setAdding] = useState(false);
  return (
    <div>
      <div className="row">
        <h1>Datacenters</h1>
        {regions.length > 0 && (
          <button type="button" onClick={() => setAdding(!adding)} aria-expanded={adding}>
            New datacenter
          </button>
        )}
      </div>
      {adding && <NewDatacenterForm regions={regions} onDone={(dcID) => navigate(`/datacenters/${dcID}`)} />}
      <Problem error={error} />
      {fetching && !data && <Loading />}
      {data && regions.length === 0 && <p className="muted">No regions are visible to you.</p>}
      {regions.map((r) => {
        const dcs = r.datacenters.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
        return (
          <section key={r.id} aria-label={`Region ${r.name}`}>
            <h2 className="row">
              {r.name} <span className="muted small">region {r.status.toLowerCase()}</span>
            </h2>
            {dcs.length === 0 ? (
              <p className="muted">No datacenters in this region.</p>
            ) : (
              <div className="grid">
                {dcs.map((dc) => (
                  <DatacenterCard key={dc.id} {...dc} />
                ))}
              </div>
            )}
          </section>
        );
      })}
    </div>
  );
}
