// /racks/<id>: the rack elevation (rackElevation) drawn as SVG, front and rear, devices coloured
// by their compute node's state; click a device for /hosts/<id>. Breadcrumbs datacenter / floor / rack.
import { useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { UsageBar } from '../../components/UsageBar';
import { RackElevation } from '../../components/rack/RackElevation';
import { Legend } from '../../components/rack/Legend';
import { nodeSwatch, nodeSwatches, roleSwatch, roleSwatches } from '../../lib/rack/colors';
import { shortDeviceName } from '../../lib/rack/layout';
import { HistoryLink } from '../../components/dcim/HistoryLink';
import { DeleteControl } from '../../components/dcim/DeleteControl';
import { EditRackForm, MountDeviceForm } from '../../components/dcim/forms';
import { DeleteRackDocument } from '../../components/dcim/deletes';
import type { Face } from '../../lib/rack/layout';
import './datacenters.css';
import { formatNumber } from '../../lib/format';
import { rackPlace } from '../../lib/rack/place';

const RackDocument = graphql(`
  query RackElevationPage($id: ID!) {
    rackElevation(id: $id) {
      rack { id name row position height status floorID floorName datacenterID datacenterName powerZone networkZone rackZone }
      usedUnits
      freeUnits
      devices {
        id
        name
        kind
        role
        model
        position
        height
        face
        fullDepth
        lifecycle
        node { id name status cordoned cpuCapacity cpuAllocated memoryCapacityMB memoryAllocatedMB vmCount }
        alerts { fatal critical warning worst }
        maintainers { id name group }
      }
    }
  }
`);

export default function RackPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const [{ data, error, fetching }, refetch] = useQuery({ query: RackDocument, variables: { id } });
  const [, deleteRack] = useMutation(DeleteRackDocument);
  const [mount, setMount] = useState<{ unit: number; face: Face } | null>(null);
  const [mountHeight, setMountHeight] = useState(1);
  const [editing, setEditing] = useState(false);
  const [colorBy, setColorBy] = useState<'state' | 'role'>('state');
  const v = data?.rackElevation;
  const counts = useMemo(() => {
    const m = new Map<string, number>();
    v?.devices.forEach((d) => m.set(nodeSwatch(d.node).key, (m.get(nodeSwatch(d.node).key) ?? 0) + 1));
    return m;
  }, [v]);
  // The role legend lists the roles present in this rack, in the palette's order.
  const roleLegend = useMemo(() => {
    const present = new Set(v?.devices.map((d) => roleSwatch(d).key));
    return Object.values(roleSwatches).filter((s) => present.has(s.key));
  }, [v]);
  if (!v) {
    return (
      <div>
        <nav className="breadcrumbs" aria-label="Breadcrumbs">
          <Link to="/datacenters">Datacenters</Link>
        </nav>
        <h1>Rack</h1>
        <Problem error={error} />
        {fetching && <Loading />}
      </div>
    );
  }
  const r = v.rack;
  const alerting = v.devices.filter((d) => d.alerts.worst);
  const nodes = v.devices.filter((d) => d.node);
  const vcpu = nodes.reduce((a, d) => [a[0] + d.node!.cpuAllocated, a[1] + d.node!.cpuCapacity], [0, 0]);
  const vms = nodes.reduce((n, d) => n + d.node!.vmCount, 0);
  return (
    <div>
      <nav className="breadcrumbs" aria-label="Breadcrumbs">
        <Link to="/datacenters">Datacenters</Link>
        <Link to={`/datacenters/${r.datacenterID}`}>{r.datacenterName}</Link>
        <Link to={`/floors/${r.floorID}`}>{r.floorName}</Link>
        <span>{r.name}</span>
      </nav>
      <div className="rack-title">
        <h1>{r.name}</h1>
        <StatusBadge status={r.status} />
        <span className="muted">
          {rackPlace(r.row, r.position)}
          {r.height}U
        </span>
        <HistoryLink type="Rack" id={r.id} />
        <button type="button" onClick={() => setEditing(!editing)} aria-expanded={editing}>
          Edit rack
        </button>
        <DeleteControl what={`rack ${r.name}`} onDelete={() => deleteRack({ id: r.id })} onDone={() => navigate(`/floors/${r.floorID}`)} />
      </div>
      {editing && <EditRackForm rack={r} onDone={() => refetch({ requestPolicy: 'network-only' })} />}
      <p className="muted small">Click a free unit in the elevation to mount a new device there.</p>
      <Problem error={error} />
      <div className="rack-page">
        <div>
          {v.devices.length === 0 && <p className="muted">This rack is empty.</p>}
          <RackElevation
            rackName={r.name}
            height={r.height}
            devices={v.devices}
            onOpen={(d) => navigate(`/hosts/${d.id}`)}
            onPickUnit={(unit, face) => setMount({ unit, face })}
            picked={mount ? { ...mount, height: mountHeight } : null}
            colorBy={colorBy}
          />
        </div>
        <aside className="rack-side">
          {mount && (
            <MountDeviceForm
              key={`${mount.unit}-${mount.face}`}
              rackID={r.id}
              unit={mount.unit}
              face={mount.face}
              height={mountHeight}
              setHeight={setMountHeight}
              onCancel={() => setMount(null)}
              onDone={() => {
                setMount(null);
                refetch({ requestPolicy: 'network-only' });
              }}
            />
          )}
          <div className="card">
            <UsageBar label="Units used" used={v.usedUnits} total={r.height} unit="U" />
            <UsageBar label="vCPU" used={vcpu[0]} total={vcpu[1]} />
            <dl style={{ marginTop: '.6rem' }}>
              <dt>Devices</dt>
              <dd>
                {v.devices.length} ({nodes.length} compute nodes, {vms} VMs)
              </dd>
              <dt>Free units</dt>
              <dd>{formatNumber(v.freeUnits)}</dd>
              <dt>Power zone</dt>
              <dd>{r.powerZone ?? '—'}</dd>
              <dt>Network zone</dt>
              <dd>{r.networkZone ?? '—'}</dd>
              <dt>Rack zone</dt>
              <dd>{r.rackZone ?? '—'}</dd>
            </dl>
          </div>
          <div className="card">
            <fieldset className="rack-color-by">
              <legend>Colour devices by</legend>
              <label>
                <input type="radio" name="color-by" checked={colorBy === 'state'} onChange={() => setColorBy('state')} /> compute node state
              </label>
              <label>
                <input type="radio" name="color-by" checked={colorBy === 'role'} onChange={() => setColorBy('role')} /> role
              </label>
            </fieldset>
            {colorBy === 'role' ? (
              <Legend swatches={roleLegend} />
            ) : (
              <>
                <Legend swatches={Object.values(nodeSwatches).filter((s) => s.key !== 'unknown' || counts.has(s.key))} />
                <p className="muted small" style={{ marginBottom: 0 }}>
                  {Object.values(nodeSwatches)
                    .filter((s) => counts.has(s.key))
                    .map((s) => `${counts.get(s.key)} ${s.label.toLowerCase()}`)
                    .join(' · ')}
                  . Faded: the far face of a full-depth device. A dot marks open alerts.
                </p>
              </>
            )}
          </div>
          <div className="card">
            <h3 style={{ marginTop: 0 }}>Open alerts</h3>
            {alerting.length === 0 ? (
              <p className="muted small" style={{ margin: 0 }}>
                No device in this rack has an open alert.
              </p>
            ) : (
              <ul className="small" style={{ margin: 0, paddingLeft: '1.1rem' }}>
                {alerting.map((d) => (
                  <li key={d.id}>
                    <Link to={`/hosts/${d.id}`}>{shortDeviceName(d.name, r.name)}</Link> <StatusBadge status={d.alerts.worst} />
                  </li>
                ))}
              </ul>
            )}
          </div>
        </aside>
      </div>
    </div>
  );
}

