// DCIM editing forms: create datacenters, floors, racks, devices (mounted at a rack unit) and
// ports, edit them, and cable two ports. Each form calls the API's entgql mutation and, on
// success, onDone with the new or changed record's id so the page can refetch or navigate.
import { useState, type FormEvent, type ReactNode } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import type { HostFace, HostKind, HostLifecycle, HostRole, LinkKind, RackStatus } from '../../gql/graphql';
import { Message, Problem } from '../Problem';

const CreateDatacenterDocument = graphql(`
  mutation CreateDatacenter($input: CreateDatacenterInput!) {
    createDatacenter(input: $input) { id name }
  }
`);
const CreateFloorDocument = graphql(`
  mutation CreateFloor($input: CreateFloorInput!) {
    createFloor(input: $input) { id name }
  }
`);
const CreateRackDocument = graphql(`
  mutation CreateRack($input: CreateRackInput!) {
    createRack(input: $input) { id name }
  }
`);
const UpdateRackDocument = graphql(`
  mutation UpdateRack($id: ID!, $input: UpdateRackInput!) {
    updateRack(id: $id, input: $input) { id name status }
  }
`);
const CreateHostDocument = graphql(`
  mutation CreateHost($input: CreateHostInput!) {
    createHost(input: $input) { id name position height face }
  }
`);
const UpdateHostDocument = graphql(`
  mutation UpdateHost($id: ID!, $input: UpdateHostInput!) {
    updateHost(id: $id, input: $input) { id name model lifecycle role }
  }
`);
const CreatePortDocument = graphql(`
  mutation CreatePort($input: CreatePortInput!) {
    createPort(input: $input) { id name }
  }
`);
const CreateLinkDocument = graphql(`
  mutation CreateLink($input: CreateLinkInput!) {
    createLink(input: $input) { id aPort { id } bPort { id } }
  }
`);
const HostSearchDocument = graphql(`
  query HostSearch($name: String!) {
    hosts(first: 20, where: { nameContainsFold: $name }, orderBy: { field: NAME }) {
      edges { node { id name rack { name } } }
    }
  }
`);
const HostPortsDocument = graphql(`
  query HostFreePorts($id: ID!) {
    node(id: $id) {
      ... on Host {
        id
        ports(first: 200) { edges { node { id name linkA { id } linkB { id } } } }
      }
    }
  }
`);

const HOST_KINDS: HostKind[] = ['SERVER', 'SWITCH', 'ROUTER', 'PDU', 'OTHER'];
const HOST_ROLES: HostRole[] = ['GATEWAY_ROUTER', 'FLOOR_SPINE', 'FLOOR_LEAF', 'RACK_SPINE', 'RACK_LEAF'];
const LIFECYCLES: HostLifecycle[] = ['PLANNED', 'STAGED', 'ACTIVE', 'MAINTENANCE', 'RETIRED'];
const RACK_STATUSES: RackStatus[] = ['ACTIVE', 'RESERVED', 'EMPTY_SPARE', 'DECOMMISSIONING'];
const LINK_KINDS: LinkKind[] = ['COPPER', 'FIBER', 'DAC', 'VIRTUAL'];

/** "GATEWAY_ROUTER" → "gateway router". */
export const enumLabel = (v: string) => v.toLowerCase().replace(/_/g, ' ');

/** A form card: title, fields, the error or success line and a submit button. */
function FormCard(props: {
  title: string;
  submit: string;
  busy: boolean;
  msg?: string;
  ok?: string;
  error?: Parameters<typeof Problem>[0]['error'];
  onSubmit(): void;
  children: ReactNode;
  extra?: ReactNode;
}) {
  const submit = (e: FormEvent) => {
    e.preventDefault();
    props.onSubmit();
  };
  return (
    <form className="card dcim-form" onSubmit={submit} aria-label={props.title}>
      <h3 style={{ marginTop: 0 }}>{props.title}</h3>
      <div className="fields">{props.children}</div>
      {props.msg && <Message kind="error">{props.msg}</Message>}
      {props.ok && <Message kind="ok">{props.ok}</Message>}
      <Problem error={props.error} />
      <div className="row" style={{ marginTop: '.75rem' }}>
        <button type="submit" className="primary" disabled={props.busy}>
          {props.submit}
        </button>
        {props.extra}
      </div>
    </form>
  );
}

function Text({ label, value, set, required, placeholder }: { label: string; value: string; set(v: string): void; required?: boolean; placeholder?: string }) {
  return (
    <label>
      {label}
      <input value={value} required={required} placeholder={placeholder} onChange={(e) => set(e.target.value)} />
    </label>
  );
}

function Num({ label, value, set, min, max }: { label: string; value: string; set(v: string): void; min?: number; max?: number }) {
  return (
    <label>
      {label}
      <input type="number" value={value} min={min} max={max} onChange={(e) => set(e.target.value)} />
    </label>
  );
}

function Choice<T extends string>({ label, value, set, options, empty }: { label: string; value: NoInfer<T> | ''; set(v: NoInfer<T> | ''): void; options: readonly T[]; empty?: string }) {
  return (
    <label>
      {label}
      <select aria-label={label} value={value} onChange={(e) => set(e.target.value as T | '')}>
        {empty !== undefined && <option value="">{empty}</option>}
        {options.map((o) => (
          <option key={o} value={o}>
            {enumLabel(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** An optional integer field: undefined when empty, NaN-free. */
function int(v: string): number | undefined {
  if (v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isInteger(n) ? n : undefined;
}

export function NewDatacenterForm({ regions, onDone }: { regions: { id: string; name: string }[]; onDone(id: string): void }) {
  const [r, create] = useMutation(CreateDatacenterDocument);
  const [name, setName] = useState('');
  const [region, setRegion] = useState('');
  const [building, setBuilding] = useState('');
  const [msg, setMsg] = useState('');
  async function submit() {
    setMsg('');
    const regionID = region || regions[0]?.id;
    if (!regionID) return setMsg('There is no region to put the datacenter in.');
    const res = await create({ input: { name: name.trim(), regionID, building: building.trim() || undefined } });
    if (res.data) onDone(res.data.createDatacenter.id);
  }
  return (
    <FormCard title="New datacenter" submit="Create datacenter" busy={r.fetching} msg={msg} error={r.error} onSubmit={submit}>
      <Text label="Name" value={name} set={setName} required />
      <label>
        Region
        <select value={region} onChange={(e) => setRegion(e.target.value)}>
          {regions.map((x) => (
            <option key={x.id} value={x.id}>
              {x.name}
            </option>
          ))}
        </select>
      </label>
      <Text label="Building" value={building} set={setBuilding} />
    </FormCard>
  );
}

export function NewFloorForm({ datacenterID, onDone }: { datacenterID: string; onDone(id: string): void }) {
  const [r, create] = useMutation(CreateFloorDocument);
  const [name, setName] = useState('');
  const [level, setLevel] = useState('');
  async function submit() {
    const res = await create({ input: { name: name.trim(), datacenterID, level: int(level) } });
    if (res.data) onDone(res.data.createFloor.id);
  }
  return (
    <FormCard title="New floor" submit="Create floor" busy={r.fetching} error={r.error} onSubmit={submit}>
      <Text label="Name" value={name} set={setName} required />
      <Num label="Level" value={level} set={setLevel} />
    </FormCard>
  );
}

export function NewRackForm({ floorID, onDone }: { floorID: string; onDone(id: string): void }) {
  const [r, create] = useMutation(CreateRackDocument);
  const [name, setName] = useState('');
  const [row, setRow] = useState('');
  const [position, setPosition] = useState('');
  const [height, setHeight] = useState('42');
  const [status, setStatus] = useState<RackStatus | ''>('ACTIVE');
  async function submit() {
    const res = await create({
      input: { name: name.trim(), floorID, row: row.trim() || undefined, position: int(position), height: int(height), status: status || undefined },
    });
    if (res.data) onDone(res.data.createRack.id);
  }
  return (
    <FormCard title="New rack" submit="Create rack" busy={r.fetching} error={r.error} onSubmit={submit}>
      <Text label="Name" value={name} set={setName} required />
      <Text label="Row" value={row} set={setRow} />
      <Num label="Position in row" value={position} set={setPosition} min={0} />
      <Num label="Height (U)" value={height} set={setHeight} min={1} max={60} />
      <Choice label="Status" value={status} set={setStatus} options={RACK_STATUSES} />
    </FormCard>
  );
}

export function EditRackForm({ rack, onDone }: { rack: { id: string; name: string; status: string }; onDone(): void }) {
  const [r, update] = useMutation(UpdateRackDocument);
  const [name, setName] = useState(rack.name);
  const [status, setStatus] = useState<RackStatus | ''>(rack.status as RackStatus);
  const [ok, setOk] = useState('');
  async function submit() {
    setOk('');
    const res = await update({ id: rack.id, input: { name: name.trim(), status: status || undefined } });
    if (res.data) {
      setOk('Saved.');
      onDone();
    }
  }
  return (
    <FormCard title="Edit rack" submit="Save rack" busy={r.fetching} ok={ok} error={r.error} onSubmit={submit}>
      <Text label="Name" value={name} set={setName} required />
      <Choice label="Status" value={status} set={setStatus} options={RACK_STATUSES} />
    </FormCard>
  );
}

/** Mounting a new device in a rack at the unit picked in the elevation. */
export function MountDeviceForm(props: {
  rackID: string;
  unit: number;
  face: HostFace;
  height: number;
  setHeight(h: number): void;
  onCancel(): void;
  onDone(id: string): void;
}) {
  const [r, create] = useMutation(CreateHostDocument);
  const [name, setName] = useState('');
  const [model, setModel] = useState('');
  const [kind, setKind] = useState<HostKind | ''>('SERVER');
  const [role, setRole] = useState<HostRole | ''>('');
  const [fullDepth, setFullDepth] = useState(true);
  async function submit() {
    const res = await create({
      input: {
        name: name.trim(),
        model: model.trim() || undefined,
        kind: kind || undefined,
        role: role || undefined,
        rackID: props.rackID,
        position: props.unit,
        height: props.height,
        face: props.face,
        fullDepth,
      },
    });
    if (res.data) props.onDone(res.data.createHost.id);
  }
  const top = props.unit + props.height - 1;
  return (
    <FormCard
      title={`Mount a device at U${props.unit}${props.height > 1 ? `–U${top}` : ''} (${props.face.toLowerCase()})`}
      submit="Mount device"
      busy={r.fetching}
      error={r.error}
      onSubmit={submit}
      extra={
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      }
    >
      <Text label="Name" value={name} set={setName} required />
      <Text label="Model" value={model} set={setModel} />
      <label>
        Height (U)
        <input type="number" min={1} max={20} value={props.height} onChange={(e) => props.setHeight(Math.max(1, int(e.target.value) ?? 1))} />
      </label>
      <Choice label="Kind" value={kind} set={setKind} options={HOST_KINDS} />
      <Choice label="Role" value={role} set={setRole} options={HOST_ROLES} empty="none" />
      <label className="checkbox">
        <span>
          <input type="checkbox" checked={fullDepth} onChange={(e) => setFullDepth(e.target.checked)} /> Full depth (blocks both faces)
        </span>
      </label>
    </FormCard>
  );
}

export function EditHostForm({ host, onDone }: { host: { id: string; name: string; model?: string | null; lifecycle: string; role?: string | null }; onDone(): void }) {
  const [r, update] = useMutation(UpdateHostDocument);
  const [name, setName] = useState(host.name);
  const [model, setModel] = useState(host.model ?? '');
  const [lifecycle, setLifecycle] = useState<HostLifecycle | ''>(host.lifecycle as HostLifecycle);
  const [role, setRole] = useState<HostRole | ''>((host.role ?? '') as HostRole | '');
  const [ok, setOk] = useState('');
  async function submit() {
    setOk('');
    const res = await update({
      id: host.id,
      input: { name: name.trim(), model: model.trim() || undefined, clearModel: model.trim() === '', lifecycle: lifecycle || undefined, role: role || undefined, clearRole: role === '' },
    });
    if (res.data) {
      setOk('Saved.');
      onDone();
    }
  }
  return (
    <FormCard title="Edit device" submit="Save device" busy={r.fetching} ok={ok} error={r.error} onSubmit={submit}>
      <Text label="Name" value={name} set={setName} required />
      <Text label="Model" value={model} set={setModel} />
      <Choice label="Lifecycle" value={lifecycle} set={setLifecycle} options={LIFECYCLES} />
      <Choice label="Role" value={role} set={setRole} options={HOST_ROLES} empty="none" />
    </FormCard>
  );
}

export function NewPortForm({ hostID, onDone }: { hostID: string; onDone(id: string): void }) {
  const [r, create] = useMutation(CreatePortDocument);
  const [name, setName] = useState('');
  const [speed, setSpeed] = useState('');
  const [vlan, setVlan] = useState('');
  async function submit() {
    const res = await create({ input: { name: name.trim(), hostID, kind: 'PHYSICAL', speedMbps: int(speed), vlan: int(vlan) } });
    if (res.data) {
      setName('');
      onDone(res.data.createPort.id);
    }
  }
  return (
    <FormCard title="New port" submit="Add port" busy={r.fetching} error={r.error} onSubmit={submit}>
      <Text label="Port name" value={name} set={setName} required placeholder="eth0" />
      <Num label="Speed (Mb/s)" value={speed} set={setSpeed} min={0} />
      <Num label="VLAN" value={vlan} set={setVlan} min={0} max={4094} />
    </FormCard>
  );
}

/** Cabling: one of this device's free ports to a free port of another device (found by name). */
export function CableForm({ ports, onDone }: { ports: { id: string; name: string }[]; onDone(aPortID: string): void }) {
  const [r, create] = useMutation(CreateLinkDocument);
  const [aPort, setAPort] = useState('');
  const [search, setSearch] = useState('');
  const [peerHost, setPeerHost] = useState('');
  const [bPort, setBPort] = useState('');
  const [kind, setKind] = useState<LinkKind | ''>('COPPER');
  const [msg, setMsg] = useState('');
  const [hosts] = useQuery({ query: HostSearchDocument, variables: { name: search.trim() }, pause: search.trim().length < 2 });
  const [peer] = useQuery({ query: HostPortsDocument, variables: { id: peerHost }, pause: !peerHost });
  const peerNode = peer.data?.node && 'ports' in peer.data.node ? peer.data.node : null;
  const peerPorts = peerNode?.ports.edges?.flatMap((e) => (e?.node && !e.node.linkA && !e.node.linkB ? [e.node] : [])) ?? [];
  async function submit() {
    setMsg('');
    if (!aPort || !bPort) return setMsg('Pick a port on both ends.');
    const res = await create({ input: { aPortID: aPort, bPortID: bPort, kind: kind || undefined, status: 'CONNECTED' } });
    if (res.data) onDone(aPort);
  }
  return (
    <FormCard title="Connect a cable" submit="Connect" busy={r.fetching} msg={msg} error={r.error ?? hosts.error ?? peer.error} onSubmit={submit}>
      <label>
        This device&apos;s port
        <select aria-label="This device's port" value={aPort} onChange={(e) => setAPort(e.target.value)}>
          <option value="">choose…</option>
          {ports.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Other device (search by name)
        <input value={search} onChange={(e) => { setSearch(e.target.value); setPeerHost(''); setBPort(''); }} placeholder="at least 2 letters" />
      </label>
      <label>
        Other device
        <select aria-label="Other device" value={peerHost} onChange={(e) => { setPeerHost(e.target.value); setBPort(''); }}>
          <option value="">choose…</option>
          {hosts.data?.hosts.edges?.map((e) => e?.node && (
            <option key={e.node.id} value={e.node.id}>
              {e.node.name}{e.node.rack ? ` (${e.node.rack.name})` : ''}
            </option>
          ))}
        </select>
      </label>
      <label>
        Its port
        <select aria-label="Its port" value={bPort} onChange={(e) => setBPort(e.target.value)} disabled={!peerHost}>
          <option value="">choose…</option>
          {peerPorts.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <Choice label="Cable" value={kind} set={setKind} options={LINK_KINDS} />
    </FormCard>
  );
}

/** Picking a device's port: search devices by name, then choose one of its ports. */
export function PortPicker({ value, onPick }: { value: string; onPick(portID: string): void }) {
  const [search, setSearch] = useState('');
  const [hostID, setHostID] = useState('');
  const [hosts] = useQuery({ query: HostSearchDocument, variables: { name: search.trim() }, pause: search.trim().length < 2 });
  const [ports] = useQuery({ query: HostPortsDocument, variables: { id: hostID }, pause: !hostID });
  const node = ports.data?.node && 'ports' in ports.data.node ? ports.data.node : null;
  const list = node?.ports.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  return (
    <>
      <label>
        Device (search)
        <input value={search} placeholder="at least 2 letters" onChange={(e) => { setSearch(e.target.value); setHostID(''); onPick(''); }} />
      </label>
      <label>
        Device
        <select aria-label="Device" value={hostID} onChange={(e) => { setHostID(e.target.value); onPick(''); }}>
          <option value="">none</option>
          {hosts.data?.hosts.edges?.map((e) => e?.node && (
            <option key={e.node.id} value={e.node.id}>
              {e.node.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Port
        <select aria-label="Port" value={value} onChange={(e) => onPick(e.target.value)} disabled={!hostID}>
          <option value="">none</option>
          {list.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
