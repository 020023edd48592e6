// A VM's snapshots and backups on its page: each with its status, size and reason (PENDING
// and CREATING until the node's agent copied the disk), taking a snapshot or a backup,
// reverting the stopped VM to a snapshot (after a confirmation: what the disk held since is
// lost), deleting either, restoring a backup into a new VM, cloning the VM and making an image
// from the stopped VM's disk.
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { StatusBadge } from '../StatusBadge';
import { formatDateTime, formatSize } from '../../lib/format';

const VMCopiesDocument = graphql(`
  query VMCopies($id: ID!) {
    node(id: $id) {
      ... on VirtualMachine {
        id
        status
        tenant { id }
        region { id }
        flavor { id }
        image { id }
        snapshots(first: 50, orderBy: { field: CREATED_AT, direction: DESC }) {
          edges { node { id name status statusReason sizeGB createdAt } }
        }
        backups(first: 50, orderBy: { field: CREATED_AT, direction: DESC }) {
          edges { node { id name status statusReason sizeGB scheduled createdAt } }
        }
      }
    }
    flavors(first: 100) { edges { node { id name diskGB } } }
  }
`);

const CreateSnapshotDocument = graphql(`
  mutation CreateSnapshot($input: CreateSnapshotInput!) { createSnapshot(input: $input) { id name status } }
`);
const RevertSnapshotDocument = graphql(`
  mutation RevertSnapshot($id: ID!) { revertSnapshot(id: $id) { id status statusReason } }
`);
const DeleteSnapshotDocument = graphql(`mutation DeleteSnapshot($id: ID!) { deleteSnapshot(id: $id) }`);
const CreateBackupDocument = graphql(`
  mutation CreateBackup($input: CreateBackupInput!) { createBackup(input: $input) { id name status } }
`);
const DeleteBackupDocument = graphql(`mutation DeleteBackup($id: ID!) { deleteBackup(id: $id) }`);
const RestoreBackupDocument = graphql(`
  mutation RestoreBackup($id: ID!, $input: CreateVirtualMachineInput!) { restoreBackup(id: $id, input: $input) { id name status } }
`);
const CreateImageFromVMDocument = graphql(`
  mutation CreateImageFromVM($id: ID!, $input: CreateImageFromVirtualMachineInput!) {
    createImageFromVirtualMachine(id: $id, input: $input) { id name status }
  }
`);
const CloneVMDocument = graphql(`
  mutation CloneVM($id: ID!, $input: CreateVirtualMachineInput!) { cloneVirtualMachine(id: $id, input: $input) { id name status } }
`);

/** A name for a new copy: prefix and the time, a valid slug. */
function suggestName(prefix: string) {
  const d = new Date();
  const p = (n: number) => String(n).padStart(2, '0');
  return `${prefix}-${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

type Flavor = { id: string; name: string; diskGB: number };

/** The new VM's name and flavor for a restore or a clone; onSubmit gets them. */
function NewVMForm({ label, submit, flavors, flavorID, minDiskGB, busy, onSubmit, onCancel }: {
  label: string; submit: string; flavors: Flavor[]; flavorID: string; minDiskGB: number; busy: boolean;
  onSubmit: (name: string, flavorID: string) => void; onCancel: () => void;
}) {
  const [name, setName] = useState('');
  const [flavor, setFlavor] = useState(flavorID);
  const fits = flavors.filter((f) => f.diskGB >= minDiskGB);
  return (
    <form className="inline-form" aria-label={label} onSubmit={(e) => { e.preventDefault(); if (name) onSubmit(name, flavor); }}>
      <label>New VM name <input value={name} onChange={(e) => setName(e.target.value)} required pattern="[a-z0-9]([a-z0-9-]*[a-z0-9])?" /></label>
      <label>
        Flavor
        <select value={flavor} onChange={(e) => setFlavor(e.target.value)}>
          {fits.map((f) => <option key={f.id} value={f.id}>{f.name} ({f.diskGB} GiB disk)</option>)}
        </select>
      </label>
      <button type="submit" disabled={busy || !name}>{submit}</button>
      <button type="button" onClick={onCancel}>Cancel</button>
    </form>
  );
}

export function VMCopies({ vmID, refreshKey }: { vmID: string; refreshKey?: string }) {
  const navigate = useNavigate();
  const [{ data, error }, reexecute] = useQuery({ query: VMCopiesDocument, variables: { id: vmID, refreshKey } as { id: string }, requestPolicy: 'cache-and-network' });
  const [snapState, createSnapshot] = useMutation(CreateSnapshotDocument);
  const [revertState, revert] = useMutation(RevertSnapshotDocument);
  const [delSnapState, deleteSnapshot] = useMutation(DeleteSnapshotDocument);
  const [backupState, createBackup] = useMutation(CreateBackupDocument);
  const [delBackupState, deleteBackup] = useMutation(DeleteBackupDocument);
  const [restoreState, restore] = useMutation(RestoreBackupDocument);
  const [cloneState, clone] = useMutation(CloneVMDocument);
  const [imageState, createImage] = useMutation(CreateImageFromVMDocument);
  const [imageName, setImageName] = useState('');
  const [snapName, setSnapName] = useState('');
  const [backupName, setBackupName] = useState('');
  // What waits for a confirmation or a form: "revert:<id>", "delsnap:<id>", "delbackup:<id>", "restore:<id>", "clone".
  const [pending, setPending] = useState('');
  const vm = data?.node?.__typename === 'VirtualMachine' ? data.node : null;
  const snaps = (vm?.snapshots.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const backups = (vm?.backups.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const flavors = (data?.flavors.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const reload = () => reexecute({ requestPolicy: 'network-only' });
  // The agent's reports move the copies on without an event on the VM: while one is on its
  // way, read them again every second and a half.
  const moving = [...snaps, ...backups].some((c) => ['PENDING', 'CREATING', 'REVERTING', 'DELETING'].includes(c.status));
  useEffect(() => {
    if (!moving) return;
    const t = setInterval(() => reexecute({ requestPolicy: 'network-only' }), 1500);
    return () => clearInterval(t);
  }, [moving, reexecute]);
  const busy = snapState.fetching || revertState.fetching || delSnapState.fetching || backupState.fetching ||
    delBackupState.fetching || restoreState.fetching || cloneState.fetching || imageState.fetching;
  const failed = snapState.error ?? revertState.error ?? delSnapState.error ?? backupState.error ?? delBackupState.error;
  const copyable = vm?.status === 'ACTIVE' || vm?.status === 'STOPPED';
  const newVM = (name: string, flavorID: string) => vm ? {
    name, tenantID: vm.tenant.id, regionID: vm.region.id, flavorID, ...(vm.image ? { imageID: vm.image.id } : {}),
  } : null;
  const done = (r: { error?: unknown }) => { if (!r.error) setPending(''); reload(); };

  return (
    <section aria-label="Snapshots and backups" data-testid="vm-copies">
      <h2>Snapshots &amp; backups</h2>
      <Problem error={error} title="The snapshots and backups could not be loaded" />
      <Problem error={failed} title="Nothing was changed" />
      <Problem error={restoreState.error ?? cloneState.error} title="No VM was created" />
      <Problem error={imageState.error} title="No image was made" />

      <h3>Snapshots</h3>
      <p className="small muted">Kept on the VM's node. Reverting needs the VM stopped; what its disk held since is lost.</p>
      {snaps.length === 0 ? <p className="muted">No snapshots.</p> : (
        <table aria-label="Snapshots">
          <thead><tr><th>Name</th><th>Size</th><th>Status</th><th>Taken</th><th>Reason</th><th></th></tr></thead>
          <tbody>
            {snaps.map((s) => (
              <tr key={s.id}>
                <td>{s.name}</td>
                <td>{formatSize(s.sizeGB, 'GiB')}</td>
                <td><StatusBadge status={s.status} /></td>
                <td className="small">{formatDateTime(s.createdAt)}</td>
                <td className="muted small">{s.statusReason}</td>
                <td>
                  {pending === `revert:${s.id}` ? (
                    <span className="row confirm" role="group" aria-label={`Confirm reverting to ${s.name}`}>
                      <span className="small">Revert the disk to {s.name}? Later writes are lost.</span>
                      <button type="button" className="danger" disabled={busy} onClick={async () => done(await revert({ id: s.id }))}>Yes, revert</button>
                      <button type="button" onClick={() => setPending('')}>Cancel</button>
                    </span>
                  ) : pending === `delsnap:${s.id}` ? (
                    <span className="row confirm" role="group" aria-label={`Confirm deleting snapshot ${s.name}`}>
                      <button type="button" className="danger" disabled={busy} onClick={async () => done(await deleteSnapshot({ id: s.id }))}>Yes, delete</button>
                      <button type="button" onClick={() => setPending('')}>Cancel</button>
                    </span>
                  ) : (
                    <span className="row">
                      <button type="button" disabled={busy || s.status !== 'AVAILABLE' || vm?.status !== 'STOPPED'}
                        title={vm?.status !== 'STOPPED' ? 'Stop the VM to revert it' : undefined}
                        onClick={() => setPending(`revert:${s.id}`)}>Revert to {s.name}</button>
                      <button type="button" className="danger" disabled={busy || s.status === 'DELETING' || s.status === 'REVERTING'}
                        onClick={() => setPending(`delsnap:${s.id}`)}>Delete snapshot {s.name}</button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="inline-form" aria-label="Take a snapshot" onSubmit={async (e) => {
        e.preventDefault();
        const r = await createSnapshot({ input: { virtualMachineID: vmID, name: snapName || suggestName('snap') } });
        if (!r.error) setSnapName('');
        reload();
      }}>
        <label>Snapshot name <input value={snapName} placeholder="snap-<time>" onChange={(e) => setSnapName(e.target.value)} /></label>
        <button type="submit" disabled={busy || !copyable}>Take snapshot</button>
      </form>

      <h3>Backups</h3>
      <p className="small muted">Stored on the region's backup target; a backup outlives the VM and is restored into a new VM.</p>
      {backups.length === 0 ? <p className="muted">No backups.</p> : (
        <table aria-label="Backups">
          <thead><tr><th>Name</th><th>Size</th><th>Status</th><th>Taken</th><th>Origin</th><th>Reason</th><th></th></tr></thead>
          <tbody>
            {backups.map((b) => (
              <tr key={b.id}>
                <td>{b.name}</td>
                <td>{formatSize(b.sizeGB, 'GiB')}</td>
                <td><StatusBadge status={b.status} /></td>
                <td className="small">{formatDateTime(b.createdAt)}</td>
                <td className="small">{b.scheduled ? 'scheduled' : 'on demand'}</td>
                <td className="muted small">{b.statusReason}</td>
                <td>
                  {pending === `restore:${b.id}` ? (
                    <NewVMForm label={`Restore ${b.name} into a new VM`} submit="Restore" flavors={flavors} flavorID={vm?.flavor.id ?? ''}
                      minDiskGB={b.sizeGB} busy={busy} onCancel={() => setPending('')}
                      onSubmit={async (name, flavorID) => {
                        const input = newVM(name, flavorID);
                        if (!input) return;
                        const r = await restore({ id: b.id, input });
                        if (r.data) navigate(`/vms/${r.data.restoreBackup.id}`);
                      }} />
                  ) : pending === `delbackup:${b.id}` ? (
                    <span className="row confirm" role="group" aria-label={`Confirm deleting backup ${b.name}`}>
                      <button type="button" className="danger" disabled={busy} onClick={async () => done(await deleteBackup({ id: b.id }))}>Yes, delete</button>
                      <button type="button" onClick={() => setPending('')}>Cancel</button>
                    </span>
                  ) : (
                    <span className="row">
                      <button type="button" disabled={busy || b.status !== 'AVAILABLE'} onClick={() => setPending(`restore:${b.id}`)}>Restore {b.name}</button>
                      <button type="button" className="danger" disabled={busy || b.status === 'DELETING'} onClick={() => setPending(`delbackup:${b.id}`)}>Delete backup {b.name}</button>
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form className="inline-form" aria-label="Take a backup" onSubmit={async (e) => {
        e.preventDefault();
        const r = await createBackup({ input: { virtualMachineID: vmID, name: backupName || suggestName('backup') } });
        if (!r.error) setBackupName('');
        reload();
      }}>
        <label>Backup name <input value={backupName} placeholder="backup-<time>" onChange={(e) => setBackupName(e.target.value)} /></label>
        <button type="submit" disabled={busy || !copyable}>Back up</button>
      </form>

      <h3>Clone</h3>
      {pending === 'clone' ? (
        <NewVMForm label="Clone into a new VM" submit="Clone" flavors={flavors} flavorID={vm?.flavor.id ?? ''} minDiskGB={0}
          busy={busy} onCancel={() => setPending('')}
          onSubmit={async (name, flavorID) => {
            const input = newVM(name, flavorID);
            if (!input) return;
            const r = await clone({ id: vmID, input });
            if (r.data) navigate(`/vms/${r.data.cloneVirtualMachine.id}`);
          }} />
      ) : (
        <p>
          <button type="button" disabled={busy || !copyable} onClick={() => setPending('clone')}>Clone this VM</button>{' '}
          <span className="small muted">A backup named clone-&lt;new name&gt; is taken and restored into the new VM.</span>
        </p>
      )}

      <h3>Image</h3>
      <p className="small muted">A catalog image made from the stopped VM's root disk, for new VMs: its node copies and uploads the disk.</p>
      <form className="inline-form" aria-label="Make an image" onSubmit={async (e) => {
        e.preventDefault();
        const r = await createImage({ id: vmID, input: { name: imageName || suggestName('image') } });
        if (!r.error) setImageName('');
      }}>
        <label>Image name <input value={imageName} placeholder="image-<time>" onChange={(e) => setImageName(e.target.value)} /></label>
        <button type="submit" disabled={busy || vm?.status !== 'STOPPED'}
          title={vm?.status !== 'STOPPED' ? 'Stop the VM to make an image of its disk' : undefined}>Make image</button>
      </form>
      {imageState.data && (
        <p role="status">
          Image {imageState.data.createImageFromVirtualMachine.name} is {imageState.data.createImageFromVirtualMachine.status}{' '}
          until the VM's node uploaded the disk: see <Link to="/images">Images</Link>.
        </p>
      )}
    </section>
  );
}
