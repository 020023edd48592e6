// /datacenters/<id>: the datacenter's floors with capacity bars and rack counts (datacenterView),
// each linking to /floors/<id>, and its clusters.
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { UsageBar } from '../../components/UsageBar';
import { DatacenterCapacityDocument } from './DatacentersPage';
import { sumFloors } from './capacity';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { DeleteControl } from '../../components/dcim/DeleteControl';
import { NewFloorForm } from '../../components/dcim/forms';
import { DeleteDatacenterDocument } from '../../components/dcim/deletes';
import './datacenters.css';
import { formatNumber } from '../../lib/format';

export default function DatacenterPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [{ data, error, fetching }] = useQuery({ query: DatacenterCapacityDocument, variables: { id } });
  const [, deleteDatacenter] = useMutation(DeleteDatacenterDocument);
  const v = data?.datacenterView;
  if (!v) {
    return (
      <div>
        <nav className="breadcrumbs" aria-label="Breadcrumbs">
          <Link to="/datacenters">Datacenters</Link>
        </nav>
        <h1>Datacenter</h1>
        <Problem error={error} />
        {fetching && <Loading />}
      </div>
    );
  }
  const s = sumFloors(v.floors);
  return (
    <div>
      <nav className="breadcrumbs" aria-label="Breadcrumbs">
        <Link to="/datacenters">Datacenters</Link>
        <span>{v.regionName ?? 'no region'}</span>
        <span>{v.name}</span>
      </nav>
      <div className="row">
        <h1>{v.name}</h1>
        <HistoryLink type="Datacenter" id={v.id} />
        <DeleteControl what={`datacenter ${v.name}`} onDelete={() => deleteDatacenter({ id: v.id })} onDone={() => navigate('/datacenters')} />
      </div>
      <Problem error={error} />
      <p className="muted">
        {v.floors.length} floors · {s.racks} racks · {s.hosts} devices · {s.readyNodes}/{s.nodes} compute nodes ready
      </p>
      <h2>Floors</h2>
      {v.floors.length === 0 ? (
        <p className="muted">This datacenter has no floors.</p>
      ) : (
        <div className="grid">
          {v.floors.map((f) => (
            <div key={f.id} className="card floor-card" data-testid="floor">
              <div className="spread">
                <h3>
                  <Link to={`/floors/${f.id}`}>{f.name}</Link>
                </h3>
                {f.alerts.worst ? <StatusBadge status={f.alerts.worst} title="worst open alert" /> : <span className="muted small">no open alert</span>}
              </div>
              <div className="small muted">
                {f.racks} racks · {f.hosts} devices · {f.capacity.readyNodes}/{f.capacity.nodes} nodes ready
              </div>
              <div className="dc-stats">
                <UsageBar label="Rack units" used={f.usedUnits} total={f.totalUnits} unit="U" />
                <UsageBar label="vCPU" used={f.capacity.cpuAllocated} total={f.capacity.cpuCapacity} />
                <UsageBar label="Memory" used={f.capacity.memoryAllocatedMB} total={f.capacity.memoryCapacityMB} size="MiB" />
                <UsageBar label="Disk" used={f.capacity.diskAllocatedGB} total={f.capacity.diskCapacityGB} size="GiB" />
              </div>
            </div>
          ))}
        </div>
      )}
      <div style={{ marginTop: '1rem', maxWidth: 560 }}>
        <NewFloorForm datacenterID={v.id} onDone={(floorID) => navigate(`/floors/${floorID}`)} />
      </div>
      <h2>Clusters</h2>
      {v.clusters.length === 0 ? (
        <p className="muted">No clusters in this datacenter.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Cluster</th>
              <th>Nodes ready</th>
              <th>VMs</th>
              <th>vCPU</th>
              <th>Memory</th>
            </tr>
          </thead>
          <tbody>
            {v.clusters.map((c) => (
              <tr key={c.id}>
                <td>
                  <Link to={`/clusters/${c.id}`}>{c.name}</Link>
                </td>
                <td>
                  {c.capacity.readyNodes}/{c.capacity.nodes}
                </td>
                <td>{formatNumber(c.vmCount)}</td>
                <td>
                  <UsageBar used={c.capacity.cpuAllocated} total={c.capacity.cpuCapacity} />
                </td>
                <td>
                  <UsageBar used={c.capacity.memoryAllocatedMB} total={c.capacity.memoryCapacityMB} size="MiB" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
