// /vms/new: the create-VM form (name, tenant, region, flavor, image, type, boot device, labels
// and schedule policy). On success it goes to the VM; on failure it shows the API's problem
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
import { buildPolicy, emptyPolicy, parseLabels, type PolicyForm } from '../../lib/compute/policy';
import '../../components/compute/compute.css';

const CreateVMDocument = graphql(`
  mutation CreateVM($input: CreateVirtualMachineInput!) {
    createVirtualMachine(input: $input) { id name status }
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
  const [type, setType] = useState<VirtualMachineType>('GENERAL');
  const [bootDevice, setBoot] = useState<VirtualMachineBootDevice>('DISK');
  const [labels, setLabels] = useState('');
  const [policy, setPolicy] = useState<PolicyForm>(emptyPolicy);
  const [formError, setFormError] = useState('');
  const [explanation, setExplanation] = useState<PlacementExplanationFieldsFragment | null>(null);
  const [explainError, setExplainError] = useState<CombinedError | null>(null);
  const [explaining, setExplaining] = useState(false);

  const regionClusters = choices.clusters.filter((c) => !regionID || c.region.id === regionID);

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
      .query(ExplainDocument, { input: { tenantID: input.tenantID, regionID: input.regionID, flavorID: input.flavorID, count: 1, schedulePolicy: input.schedulePolicy } }, { requestPolicy: 'network-only' })
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
    if (r.data?.createVirtualMachine) {
      navigate(`/vms/${r.data.createVirtualMachine.id}`);
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
          <ChoiceSelect label="Region" value={regionID} onChange={(id) => { setRegion(id); setPolicy({ ...policy, clusterNames: [] }); }} options={choices.regions} empty="choose…" required />
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
      {explaining && <Loading what="Explaining the placement" />}
      <Problem error={explainError} title="The placement could not be explained" />
      {explanation && <PlacementExplanation explanation={explanation} />}
    </div>
  );
}
