// /vms: every VM the viewer may see, filtered (status, tenant, region, name), ordered and
// paged; statuses change live through virtualMachineStatusChanged.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { OrderDirection, VirtualMachineOrderField, VirtualMachineStatus, VirtualMachineWhereInput } from '../../gql/graphql';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { ChoiceSelect, StatusFilter } from '../../components/ChoiceSelect';
import { useChoices } from '../../components/compute/choices';
import { useListFilters } from '../../components/compute/listFilters';
import { useInfraAccess } from '../../components/compute/access';
import { VMActions } from '../../components/compute/VMActions';
import { useVMEvents } from '../../components/compute/vmLive';
import { mergeEvents, unknownIds } from '../../lib/compute/live';
import { guestStateTitle, unknownExplanation, vmStatuses, vmStatusTitle } from '../../lib/compute/vmStatus';
import { formatDateTime } from '../../lib/format';
import '../../components/compute/compute.css';

const VMsDocument = graphql(`
  query VMs($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: VirtualMachineWhereInput, $orderBy: VirtualMachineOrder, $infra: Boolean!) {
    virtualMachines(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: $orderBy) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          ...VMEvent
          createdAt
          guestAddresses
          region { id name }
        }
      }
    }
  }
`);

// The filter's statuses, checked against the API's enum.
const filterStatuses: readonly VirtualMachineStatus[] = vmStatuses;
const describeStatus = (s: string) => (s === 'UNKNOWN' ? `unknown (${unknownExplanation})` : s.toLowerCase());
const orderFields: { value: VirtualMachineOrderField; label: string }[] = [
  { value: 'CREATED_AT', label: 'created' },
  { value: 'NAME', label: 'name' },
  { value: 'STATUS', label: 'status' },
  { value: 'STATUS_CHANGED_AT', label: 'status changed' },
  { value: 'GUEST_STATE', label: 'guest state' },
  { value: 'GUEST_READY_AT', label: 'guest ready' },
];

export default function VMsPage() {
  const choices = useChoices();
  const { infra, known } = useInfraAccess();
  const pager = usePager(25);
  const { status, setStatus, tenant, setTenant, region, setRegion } = useListFilters(filterStatuses);
  const [name, setName] = useState('');
  const [field, setField] = useState<VirtualMachineOrderField>('CREATED_AT');
  const [direction, setDirection] = useState<OrderDirection>('DESC');

  const where = useMemo(() => {
    const w: VirtualMachineWhereInput = {};
    if (status) w.status = status as VirtualMachineStatus;
    else w.statusNEQ = 'DELETED';
    if (tenant) w.hasTenantWith = [{ id: tenant }];
    if (region) w.hasRegionWith = [{ id: region }];
    if (name.trim()) w.nameContainsFold = name.trim();
    return w;
  }, [status, tenant, region, name]);

  const { reset } = pager;
  const filterKey = JSON.stringify([where, field, direction]);
  const firstKey = useRef(filterKey);
  useEffect(() => {
    if (firstKey.current !== filterKey) reset();
    firstKey.current = filterKey;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [filterKey]);

  const [{ data, error, fetching }, reexecute] = useQuery({
    query: VMsDocument,
    variables: { ...pager.vars, where, orderBy: { field, direction }, infra },
    pause: !known,
  });
  const { events, error: liveError } = useVMEvents(tenant ? { tenantID: tenant } : {});

  const rows = useMemo(() => (data?.virtualMachines.edges ?? []).flatMap((e) => (e?.node ? [e.node] : [])), [data]);
  const shown = mergeEvents(rows, events).filter((vm) => status === 'DELETED' || vm.status !== 'DELETED');

  // A VM the list does not show changed (e.g. created elsewhere): fetch the page again, at most every 2 s.
  const unknown = unknownIds(rows, events).filter((id) => !events?.[id] || events[id].status !== 'DELETED').join(',');
  const lastRefetch = useRef(0);
  useEffect(() => {
    if (!unknown) return;
    const wait = Math.max(0, 2000 - (Date.now() - lastRefetch.current));
    const t = setTimeout(() => {
      lastRefetch.current = Date.now();
      reexecute({ requestPolicy: 'network-only' });
    }, wait);
    return () => clearTimeout(t);
  }, [unknown, reexecute]);

  return (
    <div>
      <div className="spread">
        <h1>Virtual machines</h1>
        <Link className="button primary" to="/vms/new">Create VM</Link>
      </div>
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>
          Name contains
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder="web" />
        </label>
        <StatusFilter value={status} onChange={setStatus} statuses={filterStatuses} describe={describeStatus} />
        <ChoiceSelect label="Tenant" value={tenant} onChange={setTenant} options={choices.tenants} empty="any" />
        <ChoiceSelect label="Region" value={region} onChange={setRegion} options={choices.regions} empty="any" />
        <label>
          Order by
          <select value={field} onChange={(e) => setField(e.target.value as VirtualMachineOrderField)}>
            {orderFields.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
          </select>
        </label>
        <label>
          Direction
          <select value={direction} onChange={(e) => setDirection(e.target.value as OrderDirection)}>
            <option value="ASC">ascending</option>
            <option value="DESC">descending</option>
          </select>
        </label>
        <span className="muted small" title={liveError ? 'live updates unavailable' : 'statuses update live'}>
          <span className={`live-dot${liveError ? ' off' : ''}`} />
          {liveError ? 'not live' : 'live'}
        </span>
      </form>
      <Problem error={error} />
      <Problem error={liveError} title="Live updates stopped" />
      {!data && fetching && <Loading what="Loading virtual machines" />}
      {data && shown.length === 0 && <p className="muted">No virtual machines match these filters.</p>}
      {shown.length > 0 && (
        <div className="table-wrap">
          <table aria-label="Virtual machines">
            <thead>
              <tr>
                <th>Name</th>
                <th>Status</th>
                <th>Guest</th>
                <th>Tenant</th>
                <th>Region</th>
                <th>Address</th>
                {infra && <th>Cluster / node</th>}
                <th>Flavor</th>
                <th className="nowrap">Created</th>
                <th>Actions</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((vm) => (
                <tr key={vm.id} data-vm-id={vm.id}>
                  <td className="nowrap"><Link to={`/vms/${vm.id}`}>{vm.name}</Link></td>
                  <td><StatusBadge status={vm.status} title={vmStatusTitle(vm.status, vm.statusReason)} /></td>
                  <td data-testid="guest-state"><StatusBadge status={vm.guestState} title={guestStateTitle(vm.guestState)} /></td>
                  <td><Link to={`/tenants/${vm.tenant.id}`}>{vm.tenant.name}</Link></td>
                  <td>{vm.region.name}</td>
                  <td className="nowrap small" data-testid="vm-address">
                    {vm.guestAddresses?.length ? vm.guestAddresses.join(', ') : <span className="muted">—</span>}
                  </td>
                  {infra && <td className="small">
                    {vm.cluster ? <Link to={`/clusters/${vm.cluster.id}`}>{vm.cluster.name}</Link> : <span className="muted">no cluster</span>}
                    <br />
                    {vm.node ? <Link to={`/nodes/${vm.node.id}`} className="node-name">{vm.node.name}</Link> : <span className="muted">not placed</span>}
                  </td>}
                  <td className="nowrap">{vm.flavor.name}</td>
                  <td className="nowrap small">{formatDateTime(vm.createdAt)}</td>
                  <td><VMActions vm={vm} compact onDeleted={() => reexecute({ requestPolicy: 'network-only' })} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pageInfo={data?.virtualMachines.pageInfo} total={data?.virtualMachines.totalCount} pager={pager} />
    </div>
  );
}
