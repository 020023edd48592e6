// /services: region services filtered (status, tenant, region, name) and paged, statuses live
// through regionServiceStatusChanged; a form creates one.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import type { RegionServiceStatus, RegionServiceWhereInput } from '../../gql/graphql';
import { Loading } from '../../components/Loading';
import { Pager, usePager } from '../../components/Pager';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { ChoiceSelect, StatusFilter } from '../../components/ChoiceSelect';
import { useChoices } from '../../components/compute/choices';
import { useListFilters } from '../../components/compute/listFilters';
import { CreateServiceForm } from '../../components/compute/CreateServiceForm';
import { useServiceEvents } from '../../components/compute/serviceLive';
import { mergeEvents, unknownIds } from '../../lib/compute/live';
import { formatDateTime, formatNumber } from '../../lib/format';
import '../../components/compute/compute.css';

const ServicesDocument = graphql(`
  query RegionServices($first: Int, $after: Cursor, $last: Int, $before: Cursor, $where: RegionServiceWhereInput) {
    regionServices(first: $first, after: $after, last: $last, before: $before, where: $where, orderBy: { field: CREATED_AT, direction: DESC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          ...ServiceEvent
          createdAt
          virtualMachines(where: { statusNEQ: DELETED }) { totalCount }
        }
      }
    }
  }
`);

const statuses: RegionServiceStatus[] = ['INITIALIZING', 'CREATING', 'ACTIVE', 'UPDATING', 'DELETING', 'ERROR'];

export default function ServicesPage() {
  const choices = useChoices();
  const navigate = useNavigate();
  const pager = usePager(25);
  const [creating, setCreating] = useState(false);
  const { status, setStatus, tenant, setTenant, region, setRegion } = useListFilters(statuses);
  const [name, setName] = useState('');
  const where = useMemo(() => {
    const w: RegionServiceWhereInput = {};
    if (status) w.status = status as RegionServiceStatus;
    else w.statusNEQ = 'DELETED';
    if (tenant) w.hasTenantWith = [{ id: tenant }];
    if (region) w.hasRegionWith = [{ id: region }];
    if (name.trim()) w.nameContainsFold = name.trim();
    return w;
  }, [status, tenant, region, name]);
  const { reset } = pager;
  const key = JSON.stringify(where);
  const lastKey = useRef(key);
  useEffect(() => {
    if (lastKey.current !== key) reset();
    lastKey.current = key;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key]);

  const [{ data, error, fetching }, reexecute] = useQuery({ query: ServicesDocument, variables: { ...pager.vars, where } });
  const { events, error: liveError } = useServiceEvents(tenant ? { tenantID: tenant } : {});
  const rows = useMemo(() => (data?.regionServices.edges ?? []).flatMap((e) => (e?.node ? [e.node] : [])), [data]);
  const shown = mergeEvents(rows, events);
  const unknown = unknownIds(rows, events).join(',');
  useEffect(() => {
    if (!unknown) return;
    const t = setTimeout(() => reexecute({ requestPolicy: 'network-only' }), 1000);
    return () => clearTimeout(t);
  }, [unknown, reexecute]);

  return (
    <div>
      <div className="spread">
        <h1>Region services</h1>
        {!creating && <button type="button" className="primary" onClick={() => setCreating(true)}>Create service</button>}
      </div>
      {creating && <CreateServiceForm onCreated={(id) => navigate(`/services/${id}`)} onCancel={() => setCreating(false)} />}
      <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filters">
        <label>Name contains<input value={name} onChange={(e) => setName(e.target.value)} /></label>
        <StatusFilter value={status} onChange={setStatus} statuses={statuses} />
        <ChoiceSelect label="Tenant" value={tenant} onChange={setTenant} options={choices.tenants} empty="any" />
        <ChoiceSelect label="Region" value={region} onChange={setRegion} options={choices.regions} empty="any" />
        <span className="muted small"><span className={`live-dot${liveError ? ' off' : ''}`} />{liveError ? 'not live' : 'live'}</span>
      </form>
      <Problem error={error} />
      <Problem error={liveError} title="Live updates stopped" />
      {!data && fetching && <Loading what="Loading region services" />}
      {data && shown.length === 0 && <p className="muted">No region services match these filters.</p>}
      {shown.length > 0 && (
        <table aria-label="Region services">
          <thead><tr><th>Name</th><th>Status</th><th>Replicas</th><th>Tenant</th><th>Region</th><th>Flavor</th><th>Image</th><th>Created</th></tr></thead>
          <tbody>
            {shown.map((s) => (
              <tr key={s.id} data-service-id={s.id}>
                <td><Link to={`/services/${s.id}`}>{s.name}</Link></td>
                <td><StatusBadge status={s.status} title={s.statusReason} /></td>
                <td>{formatNumber(s.virtualMachines.totalCount)} / {formatNumber(s.replicas)}</td>
                <td><Link to={`/tenants/${s.tenant.id}`}>{s.tenant.name}</Link></td>
                <td>{s.region.name}</td>
                <td>{s.flavor?.name ?? '—'}</td>
                <td>{s.image?.name ?? '—'}</td>
                <td className="small nowrap">{formatDateTime(s.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.regionServices.pageInfo} total={data?.regionServices.totalCount} pager={pager} />
    </div>
  );
}
