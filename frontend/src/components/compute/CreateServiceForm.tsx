// The create-region-service form: name, tenant, region, flavor, image, replicas, partial
// placement and the schedule policy. On failure: the problem and the placement explanation
// for the whole group of replicas.
import { useState, type FormEvent } from 'react';
import { useClient, useMutation } from 'urql';
import type { CombinedError } from 'urql';
import { graphql } from '../../gql';
import type { CreateRegionServiceInput, PlacementExplanationFieldsFragment } from '../../gql/graphql';
import { Message, Problem } from '../Problem';
import { ChoiceSelect } from '../ChoiceSelect';
import { describeFlavor, describeImage, imageUnusable, useChoices } from './choices';
import { ExplainDocument, PlacementExplanation } from './PlacementExplanation';
import { SchedulePolicyFields } from './SchedulePolicyFields';
import { buildPolicy, emptyPolicy, type PolicyForm } from '../../lib/compute/policy';
import './compute.css';

const CreateServiceDocument = graphql(`
  mutation CreateRegionService($input: CreateRegionServiceInput!) {
    createRegionService(input: $input) { id name status }
  }
`);

/** The form; onCreated gets the new service's id. */
export function CreateServiceForm({ onCreated, onCancel }: { onCreated: (id: string) => void; onCancel: () => void }) {
  const choices = useChoices();
  const client = useClient();
  const [create, doCreate] = useMutation(CreateServiceDocument);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [tenantID, setTenant] = useState('');
  const [regionID, setRegion] = useState('');
  const [flavorID, setFlavor] = useState('');
  const [imageID, setImage] = useState('');
  const [replicas, setReplicas] = useState(2);
  const [allowPartial, setAllowPartial] = useState(false);
  const [policy, setPolicy] = useState<PolicyForm>(emptyPolicy);
  const [formError, setFormError] = useState('');
  const [explanation, setExplanation] = useState<PlacementExplanationFieldsFragment | null>(null);
  const [explainError, setExplainError] = useState<CombinedError | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    setFormError('');
    setExplanation(null);
    setExplainError(null);
    if (!tenantID || !regionID || !flavorID) {
      setFormError('Choose a tenant, a region and a flavor.');
      return;
    }
    let schedulePolicy;
    try {
      schedulePolicy = buildPolicy(policy);
    } catch (err) {
      setFormError(`Schedule policy: ${(err as Error).message}`);
      return;
    }
    const input: CreateRegionServiceInput = { name: name.trim(), tenantID, regionID, flavorID, replicas, allowPartial };
    if (description.trim()) input.description = description.trim();
    if (imageID) input.imageID = imageID;
    if (schedulePolicy) input.schedulePolicy = schedulePolicy;
    const r = await doCreate({ input });
    if (r.data?.createRegionService) {
      onCreated(r.data.createRegionService.id);
      return;
    }
    const codes = r.error?.graphQLErrors.map((g) => g.extensions?.code) ?? [];
    if (r.error && !codes.includes('FORBIDDEN')) {
      const x = await client
        .query(ExplainDocument, { input: { tenantID, regionID, flavorID, count: replicas, allowPartial, schedulePolicy } }, { requestPolicy: 'network-only' })
        .toPromise();
      setExplanation(x.data?.explainPlacement ?? null);
      setExplainError(x.error ?? null);
    }
  }

  return (
    <form onSubmit={submit} className="form-section" aria-label="Create region service">
      <h2 style={{ marginTop: 0 }}>New region service</h2>
      <Problem error={choices.error} title="The form's choices could not be loaded" />
      <div className="fields">
        <label>Name<input value={name} onChange={(e) => setName(e.target.value)} required /></label>
        <ChoiceSelect label="Tenant" value={tenantID} onChange={setTenant} options={choices.tenants} empty="choose…" required />
        <ChoiceSelect label="Region" value={regionID} onChange={(id) => { setRegion(id); setPolicy({ ...policy, clusterNames: [] }); }} options={choices.regions} empty="choose…" required />
        <ChoiceSelect label="Flavor" value={flavorID} onChange={setFlavor} options={choices.flavors} empty="choose…" required describe={describeFlavor} />
        <ChoiceSelect label="Image" value={imageID} onChange={setImage} options={choices.images} empty="none" describe={describeImage} disabled={imageUnusable} />
        <label>
          Replicas
          <input type="number" min={1} max={500} value={replicas} onChange={(e) => setReplicas(Math.max(1, Number(e.target.value) || 1))} />
        </label>
        <label>Description<input value={description} onChange={(e) => setDescription(e.target.value)} /></label>
        <label style={{ flexDirection: 'row', alignItems: 'center', gap: '.4rem' }}>
          <input type="checkbox" checked={allowPartial} onChange={(e) => setAllowPartial(e.target.checked)} />
          place as many replicas as fit
        </label>
      </div>
      <SchedulePolicyFields value={policy} onChange={setPolicy} clusters={choices.clusters.filter((c) => !regionID || c.region.id === regionID)} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={create.fetching}>{create.fetching ? 'Creating…' : 'Create service'}</button>
        <button type="button" onClick={onCancel}>Cancel</button>
      </div>
      {formError && <Message kind="error">{formError}</Message>}
      <Problem error={create.error} title="The service was not created" />
      <Problem error={explainError} title="The placement could not be explained" />
      {explanation && <PlacementExplanation explanation={explanation} />}
    </form>
  );
}
