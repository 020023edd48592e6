// /services/<id>: one region service — status (live), its replica VMs (live), scale and delete.
import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { useServiceEvents } from '../../components/compute/serviceLive';
import { useVMEvents } from '../../components/compute/vmLive';
import { useInfraAccess } from '../../components/compute/access';
import { mergeEvents, withEvent } from '../../lib/compute/live';
import { describePolicy } from '../../lib/compute/policy';
import { formatDateTime } from '../../lib/format';
import '../../components/compute/compute.css';

const ServiceDocument = graphql(`
  query RegionService($id: ID!, $infra: Boolean!) {
    node(id: $id) {
      ... on RegionService {
        ...ServiceEvent
        description
        createdAt
        schedulePolicy {
          clusterNames clusterLabels nodeNames nodeLabelHardAffinities nodeLabelHardAntiAffinities
          nodeLabelSoftAffinities nodeLabelSoftAntiAffinities nodeLabelHardExclusions nodeLabelSoftExclusions zones { kind mode zone }
        }
        globalService { id name }
        loadBalancer { id name }
        virtualMachines(first: 200, where: { statusNEQ: DELETED }, orderBy: { field: NAME }) {
          totalCount
          edges { node { ...VMEvent } }
        }
      }
    }
  }
`);

const ScaleDocument = graphql(`
  mutation ScaleRegionService($id: ID!, $replicas: Int!) {
    scaleRegionService(id: $id, replicas: $replicas) { id replicas status statusReason updatedAt }
  }
`);
const DeleteServiceDocument = graphql(`mutation DeleteRegionService($id: ID!) { deleteRegionService(id: $id) }`);

export default function ServicePage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const { infra, known } = useInfraAccess();
  const [{ data, error, fetching }, reexecute] = useQuery({ query: ServiceDocument, variables: { id, infra }, pause: !known });
  const loaded = data?.node && data.node.__typename === 'RegionService' ? data.node : null;
  const { events: svcEvents, error: svcLiveError } = useServiceEvents({ id });
  const { events: vmEvents, error: vmLiveError } = useVMEvents(loaded ? { tenantID: loaded.tenant.id } : {}, !loaded);
  const [scale, doScale] = useMutation(ScaleDocument);
  const [del, doDelete] = useMutation(DeleteServiceDocument);
  const [replicas, setReplicas] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);

  // Replicas come and go with the service's status changes and with VM events naming it: read the list again.
  const svcStamp = svcEvents?.[id]?.updatedAt ?? '';
  const vmStamp = Object.values(vmEvents ?? {})
    .filter((e) => e.regionService?.id === id)
    .map((e) => `${e.id}:${e.status}`)
    .sort()
    .join(',');
  useEffect(() => {
    if (!svcStamp && !vmStamp) return;
    const t = setTimeout(() => reexecute({ requestPolicy: 'network-only' }), 300);
    return () => clearTimeout(t);
  }, [svcStamp, vmStamp, reexecute]);

  if (error) return <Problem error={error} title="The service could not be loaded" />;
  if (!data && (fetching || !known)) return <Loading what="Loading the region service" />;
  if (!loaded) {
    return (
      <div>
        <h1>Service not found</h1>
        <p>There is no region service {id} you may see. <Link to="/services">All services</Link></p>
      </div>
    );
  }
  const svc = withEvent(loaded, svcEvents?.[id]);
  const vms = mergeEvents((svc.virtualMachines.edges ?? []).flatMap((e) => (e?.node ? [e.node] : [])), vmEvents).filter((v) => v.status !== 'DELETED');
  const want = replicas ?? svc.replicas;
  const policy = describePolicy(svc.schedulePolicy);

  return (
    <div>
      <div className="breadcrumbs"><Link to="/services">Region services</Link><span>{svc.name}</span></div>
      <div className="spread">
        <h1>{svc.name} <StatusBadge status={svc.status} title={svc.statusReason} /></h1>
        <div className="row">
          <form
            className="row"
            onSubmit={async (e) => {
              e.preventDefault();
              const r = await doScale({ id, replicas: want });
              if (!r.error && r.data && !r.data.scaleRegionService) navigate('/services');
              else if (!r.error) setReplicas(null);
            }}
          >
            <label style={{ flexDirection: 'row', alignItems: 'center', gap: '.4rem' }}>
              Replicas
              <input type="number" min={0} max={500} style={{ width: '5rem' }} value={want} onChange={(e) => setReplicas(Math.max(0, Number(e.target.value) || 0))} />
            </label>
            <button type="submit" disabled={scale.fetching || want === svc.replicas}>{scale.fetching ? 'Scaling…' : 'Scale'}</button>
          </form>
          {!confirming ? (
            <button type="button" className="danger" onClick={() => setConfirming(true)}>Delete</button>
          ) : (
            <span className="row" role="group" aria-label={`Confirm deleting ${svc.name}`}>
              <span>Delete {svc.name} and its {vms.length} VMs?</span>
              <button type="button" className="danger" disabled={del.fetching} onClick={async () => {
                const r = await doDelete({ id });
                setConfirming(false);
                if (!r.error) navigate('/services');
              }}>Yes, delete</button>
              <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
            </span>
          )}
        </div>
      </div>
      <Problem error={scale.error} title="Scaling failed" />
      <Problem error={del.error} title="The service was not deleted" />
      <Problem error={svcLiveError || vmLiveError} title="Live updates stopped" />
      <p className="muted">{svc.statusReason || 'No status reason.'}</p>
      <div className="grid">
        <section className="card">
          <h3>Service</h3>
          <dl className="dl">
            <dt>Tenant</dt><dd><Link to={`/tenants/${svc.tenant.id}`}>{svc.tenant.name}</Link></dd>
            <dt>Region</dt><dd>{svc.region.name}</dd>
            <dt>Flavor</dt><dd>{svc.flavor?.name ?? '—'}</dd>
            <dt>Image</dt><dd>{svc.image?.name ?? '—'}</dd>
            <dt>Replicas</dt><dd data-testid="replicas">{vms.length} of {svc.replicas}{svc.allowPartial ? ' (partial allowed)' : ''}</dd>
            <dt>Created</dt><dd>{formatDateTime(svc.createdAt)}</dd>
            {svc.globalService && <><dt>Global service</dt><dd><Link to={`/global-services/${svc.globalService.id}`}>{svc.globalService.name}</Link></dd></>}
            {svc.loadBalancer && <><dt>Load balancer</dt><dd><Link to={`/load-balancers/${svc.loadBalancer.id}`}>{svc.loadBalancer.name}</Link></dd></>}
            {svc.description && <><dt>Description</dt><dd>{svc.description}</dd></>}
          </dl>
        </section>
        <section className="card">
          <h3>Schedule policy</h3>
          {policy.length === 0 ? <p className="muted">Default placement: any cluster of the region.</p> : (
            <ul className="policy-lines">{policy.map((l) => <li key={l}>{l}</li>)}</ul>
          )}
        </section>
      </div>
      <h2>Replica VMs</h2>
      {vms.length === 0 ? (
        <p className="muted">The service has no VMs.</p>
      ) : (
        <table aria-label="Replica VMs">
          <thead><tr><th>VM</th><th>Status</th>{infra && <><th>Cluster</th><th>Node</th></>}<th>Flavor</th></tr></thead>
          <tbody>
            {vms.map((v) => (
              <tr key={v.id} data-vm-id={v.id}>
                <td><Link to={`/vms/${v.id}`}>{v.name}</Link></td>
                <td><StatusBadge status={v.status} title={v.statusReason} /></td>
                {infra && (
                  <>
                    <td>{v.cluster ? <Link to={`/clusters/${v.cluster.id}`}>{v.cluster.name}</Link> : '—'}</td>
                    <td>{v.node ? <Link to={`/nodes/${v.node.id}`}>{v.node.name}</Link> : 'not placed'}</td>
                  </>
                )}
                <td>{v.flavor.name}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
