// The guest part of the create-VM form: the networks the VM gets a NIC (MAC and address) on,
// the SSH keys for the image's default user, and cloud-config user-data, all put on the VM's
// config drive. Networks and keys are those the viewer may read: shared VM networks and the
// tenant's own, the tenant's keys and the viewer's own. With no network chosen the form says
// which default VM network the VM lands on, or that the tenant has none (no NIC).
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { formatNumber } from '../../lib/format';

const GuestChoicesDocument = graphql(`
  query GuestChoices {
    networks(first: 200, where: { purpose: VM }, orderBy: { field: CIDR, direction: ASC }) {
      edges { node { id name cidr tenant { id } } }
    }
    sshKeys(first: 200, orderBy: { field: NAME, direction: ASC }) {
      edges { node { id name fingerprint tenant { id } } }
    }
    tenants(first: 200) {
      edges { node { id defaultVMNetwork { id name cidr } } }
    }
  }
`);

/** The guest configuration a create-VM request carries. */
export interface GuestForm {
  networkIDs: string[];
  sshKeyIDs: string[];
  userData: string;
}

export const emptyGuest: GuestForm = { networkIDs: [], sshKeyIDs: [], userData: '' };

/** The most user-data the API takes, in bytes. */
export const maxUserData = 64 * 1024;

function selected(e: React.ChangeEvent<HTMLSelectElement>): string[] {
  return Array.from(e.target.selectedOptions, (o) => o.value);
}

export function GuestFields({ tenantID, value, onChange }: { tenantID: string; value: GuestForm; onChange: (g: GuestForm) => void }) {
  const [{ data, error }] = useQuery({ query: GuestChoicesDocument });
  const forTenant = <T extends { tenant?: { id: string } | null }>(x: T) => !x.tenant || x.tenant.id === tenantID;
  const networks = (data?.networks.edges ?? []).flatMap((e) => (e?.node ? [e.node] : [])).filter(forTenant);
  const keys = (data?.sshKeys.edges ?? []).flatMap((e) => (e?.node ? [e.node] : [])).filter(forTenant);
  const size = new TextEncoder().encode(value.userData).length;
  const tenant = (data?.tenants.edges ?? []).find((e) => e?.node?.id === tenantID)?.node;
  const fallback = tenant?.defaultVMNetwork;
  return (
    <fieldset className="fields" aria-label="Guest">
      <legend>Guest: networks, SSH keys, user-data</legend>
      <Problem error={error} title="Networks and SSH keys could not be loaded" />
      <label>
        Networks <span className="muted small">(none: the tenant's default VM network)</span>
        <select multiple value={value.networkIDs} onChange={(e) => onChange({ ...value, networkIDs: selected(e) })} aria-label="Networks">
          {networks.map((n) => <option key={n.id} value={n.id}>{n.name} ({n.cidr})</option>)}
        </select>
        {tenantID && data && value.networkIDs.length === 0 && (fallback
          ? <span className="muted small" role="note">No network chosen: the VM gets a NIC on {fallback.name} ({fallback.cidr}), the tenant's default VM network.</span>
          : <span className="small" role="status"><strong>No NIC:</strong> this tenant has no default VM network: choose a network, or the VM gets no NIC and no address.</span>)}
      </label>
      <label>
        SSH keys
        <select multiple value={value.sshKeyIDs} onChange={(e) => onChange({ ...value, sshKeyIDs: selected(e) })} aria-label="SSH keys">
          {keys.map((k) => <option key={k.id} value={k.id}>{k.name} {k.fingerprint}</option>)}
        </select>
      </label>
      <label>
        User-data <span className="muted small">(#cloud-config, {formatNumber(size)} of {formatNumber(maxUserData)} bytes)</span>
        <textarea rows={6} value={value.userData} onChange={(e) => onChange({ ...value, userData: e.target.value })}
          placeholder={'#cloud-config\npackages: [nginx]'} aria-label="User-data" />
      </label>
    </fieldset>
  );
}
