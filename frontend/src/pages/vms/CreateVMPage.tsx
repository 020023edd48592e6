// /vms/new: the create-VM form (name, tenant, region, availability zone, flavor, image, type, boot device, labels,
// networks, SSH keys, user-data, new volumes and schedule policy). On success it goes to the VM; on failure it shows the API's problem
// and explainPlacement's answer for the same request.
import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { useClient, useMutation } from 'urql';
import type { CombinedError } from 'urql';
import { graphql } from '../../gql';
import type { CreateVirtualMachineInput, PlacementExplanationFieldsFragment, VirtualMachineBootDevice, VirtualMachineType } from '../../gql/graphql';
import { Message, Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { ChoiceSelect } from '../../components/ChoiceSelect';
import { describeFlavor, describeImage, imageUnusable, useChoices } from '../../components/compute/choices';
import { ExplainDocument, PlacementExplanation } from '../../components/compute/PlacementExplanation';
import { SchedulePolicyFields } from '../../components/compute/SchedulePolicyFields';
import { GuestFields, emptyGuest, maxUserData, type GuestForm } from '../../components/compute/GuestFields';
import { VolumeFields, type NewVolume } from '../../components/compute/VolumeFields';
import { buildPolicy, emptyPolicy, parseLabels, type PolicyForm } from '../../lib/compute/policy';
import '../../components/compute/compute.css';

const CreateVMDocument = graphql(`
  mutation CreateVM($input: CreateVirtualMachineInput!) {
    createVirtualMachine(input: $input) { id name status }
  }
`);

const CreateVolumeDocument = graphql(`
  mutation CreateVMVolume($input: CreateVolumeInput!) {
    createVolume(input: $input) { id status }
  }
`);

const types: VirtualMachineType[] = ['GENERAL', 'WORKER', 'CONTROL_PLANE', 'MANAGEMENT'];
const bootDevices: VirtualMachineBootDevice[] = ['DISK', 'CDROM', 'FLOPPY'];

export default function CreateVMPage() {
  const choices = useChoices();
  const client = useClient();
  const navigate = useNavigate();
  const [create, doCreate] = useMutation(CreateVMDocument);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [tenantID, setTenant] = useState('');
  const [regionID, setRegion] = useState('');
  const [flavorID, setFlavor] = useState('');
  const [imageID, setImage] = useState('');
  const [zoneID, setZone] = useState('');
  const [type, setType] = useState<VirtualMachineType>('GENERAL');
  const [bootDevice, setBoot] = useState<VirtualMachineBootDevice>('DISK');
  const [labels, setLabels] = useState('');
  const [policy, setPolicy] = useState<PolicyForm>(emptyPolicy);
  const [guest, setGuest] = useState<GuestForm>(emptyGuest);
  const [volumes, setVolumes] = useState<NewVolume[]>([]);
  const [volumeError, setVolumeError] = useState<CombinedError | null>(null);
  const [, doCreateVolume] = useMutation(CreateVolumeDocument);
  const [formError, setFormError] = useState('');
  const [explanation, setExplanation] = useState<PlacementExplanationFieldsFragment | null>(null);
  const [explainError, setExplainError] = useState<CombinedError | null>(null);
  const [explaining, setExplaining] = useState(false);

  const regionClusters = choices.clusters.filter((c) => !regionID || c.region.id === regionID);
  const regionZones = choices.zones.filter((z) => z.region.id === regionID);

  /** The request as the API takes it, or null (with a message) when the form is incomplete. */
  function request(): CreateVirtualMachineInput | null {
    setFormError('');
    if (!tenantID || !regionID || !flavorID) {
      setFormError('Choose a tenant, a region and a flavor.');
      return null;
    }
    try {
      const l = parseLabels(labels);
      const input: CreateVirtualMachineInput = { name: name.trim(), tenantID, regionID, flavorID, type, bootDevice };
      if (description.trim()) input.description = description.trim();
      if (imageID) input.imageID = imageID;
      if (guest.networkIDs.length) input.networkIDs = guest.networkIDs;
      if (guest.sshKeyIDs.length) input.sshKeyIDs = guest.sshKeyIDs;
      if (guest.userData.trim()) {
        if (new TextEncoder().encode(guest.userData).length > maxUserData) {
          setFormError('User-data: at most 64 KiB.');
          return null;
        }
        input.userData = guest.userData;
      }
      if (zoneID) input.availabilityZoneID = zoneID;
      if (Object.keys(l).length) input.labels = l;
      const p = buildPolicy(policy);
      if (p) input.schedulePolicy = p;
      return input;
    } catch (e) {
      setFormError(`Labels: ${(e as Error).message}`);
      return null;
    }
  }

  async function explain(input: CreateVirtualMachineInput) {
    setExplaining(true);
    const r = await client
      .query(ExplainDocument, { input: { tenantID: input.tenantID, regionID: input.regionID, flavorID: input.flavorID, count: 1, schedulePolicy: input.schedulePolicy, availabilityZoneID: input.availabilityZoneID } }, { requestPolicy: 'network-only' })
      .toPromise();
    setExplaining(false);
    setExplanation(r.data?.explainPlacement ?? null);
    setExplainError(r.error ?? null);
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    setExplanation(null);
    setExplainError(null);
    const input = request();
    if (!input) return;
    const r = await doCreate({ input });
    const vm = r.data?.createVirtualMachine;
    if (vm) {
      // The volumes go with the VM once it exists (on its node, attached after the root disk).
      for (const [i, v] of volumes.entries()) {
        const vr = await doCreateVolume({ input: { name: `${vm.name}-vol${i + 1}`, sizeGB: Number(v.sizeGB), type: v.type, tenantID: tenantID, virtualMachineID: vm.id } });
        if (vr.error) {
          setVolumeError(vr.error);
          return;
        }
      }
      navigate(`/vms/${vm.id}`);
      return;
    }
    // Whatever failed (no capacity, quota, validation), show why the request fits where it does or nowhere.
    const codes = r.error?.graphQLErrors.map((g) => g.extensions?.code) ?? [];
    if (r.error && !codes.includes('FORBIDDEN') && !codes.includes('UNAUTHENTICATED')) await explain(input);
  }

  if (choices.fetching && choices.tenants.length === 0) return <Loading what="Loading tenants, regions, flavors and images" />;

  return (
    <div>
      <div className="breadcrumbs"><Link to="/vms">Virtual machines</Link><span>New</span></div>
      <h1>Create a virtual machine</h1>
      <Problem error={choices.error} title="The form's choices could not be loaded" />
      <form onSubmit={submit} aria-label="Create VM">
        <div className="fields">
          <label>
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} required autoFocus />
          </label>
          <ChoiceSelect label="Tenant" value={tenantID} onChange={setTenant} options={choices.tenants} empty="choose…" required />
          <ChoiceSelect label="Region" value={regionID} onChange={(id) => { setRegion(id); setZone(''); setPolicy({ ...policy, clusterNames: [] }); }} options={choices.regions} empty="choose…" required />
          <ChoiceSelect label="Availability zone" value={zoneID} onChange={setZone} options={regionZones} empty="any" />
          <ChoiceSelect label="Flavor" value={flavorID} onChange={setFlavor} options={choices.flavors} empty="choose…" required describe={describeFlavor} />
          <ChoiceSelect label="Image" value={imageID} onChange={setImage} options={choices.images} empty="none" describe={describeImage} disabled={imageUnusable} />
          <label>
            Type
            <select value={type} onChange={(e) => setType(e.target.value as VirtualMachineType)}>
              {types.map((t) => <option key={t} value={t}>{t.replace('_', ' ').toLowerCase()}</option>)}
            </select>
          </label>
          <label>
            Boot device
            <select value={bootDevice} onChange={(e) => setBoot(e.target.value as VirtualMachineBootDevice)}>
              {bootDevices.map((b) => <option key={b} value={b}>{b.toLowerCase()}</option>)}
            </select>
          </label>
          <label>
            Labels
            <input value={labels} onChange={(e) => setLabels(e.target.value)} placeholder="app=web, env=prod" />
          </label>
          <label>
            Description
            <input value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
        </div>
        <GuestFields tenantID={tenantID} value={guest} onChange={setGuest} />
        <VolumeFields value={volumes} onChange={setVolumes} />
        <SchedulePolicyFields value={policy} onChange={setPolicy} clusters={regionClusters} />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={create.fetching}>{create.fetching ? 'Creating…' : 'Create VM'}</button>
          <button
            type="button"
            disabled={explaining}
            onClick={() => {
              const input = request();
              if (input) void explain(input);
            }}
          >
            Explain placement
          </button>
          <Link to="/vms">Cancel</Link>
        </div>
      </form>
      {formError && <Message kind="error">{formError}</Message>}
      <Problem error={create.error} title="The VM was not created" />
      {volumeError && create.data?.createVirtualMachine && (
        <>
          <Problem error={volumeError} title="The VM was created, but a volume was not" />
          <p><Link to={`/vms/${create.data.createVirtualMachine.id}`}>Go to the VM</Link></p>
        </>
      )}
      {explaining && <Loading what="Explaining the placement" />}
      <Problem error={explainError} title="The placement could not be explained" />
      {explanation && <PlacementExplanation explanation={explanation} />}
    </div>
  );
}
