// /vms/<id>: one VM — status (live), placement, flavor and image, allocation, ports and IPs,
// the node agent's assignment, volumes, snapshots and backups, and the power actions.
import { Fragment, useEffect } from 'react';
import { useNavigate, useParams, Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Loading } from '../../components/Loading';
import { Problem } from '../../components/Problem';
import { StatusBadge } from '../../components/StatusBadge';
import { VMActions } from '../../components/compute/VMActions';
import { ResizeVM } from '../../components/compute/ResizeVM';
import { VMVolumes } from '../../components/compute/VMVolumes';
import { VMCopies } from '../../components/compute/VMCopies';
import { VMTimeline } from '../../components/compute/VMTimeline';
import { VMConsole } from '../../components/compute/VMConsole';
import { VMUsage } from '../../components/compute/VMUsage';
import { useVMEvents } from '../../components/compute/vmLive';
import { useInfraAccess } from '../../components/compute/access';
import { withEvent } from '../../lib/compute/live';
import { describePolicy, formatLabels } from '../../lib/compute/policy';
import { guestStateTitle, vmStatusTitle } from '../../lib/compute/vmStatus';
import { formatDateTime, formatSize, formatNumber } from '../../lib/format';
import '../../components/compute/compute.css';

const VMDocument = graphql(`
  query VM($id: ID!, $infra: Boolean!) {
    node(id: $id) {
      ... on VirtualMachine {
        ...VMEvent
        description
        type
        bootDevice
        labels
        revision
        createdAt
        availabilityZone { id name }
        revisionHistory { revision flavorName vcpus memoryMB createdAt }
        schedulePolicy {
          clusterNames clusterLabels nodeNames nodeLabelHardAffinities nodeLabelHardAntiAffinities
          nodeLabelSoftAffinities nodeLabelSoftAntiAffinities nodeLabelHardExclusions nodeLabelSoftExclusions zones { kind mode zone }
        }
        region { id name }
        image { id name osName osVersion }
        regionService { id name }
        routes { address node namespace linkAddress announced updatedAt }
        ports(first: 20) {
          edges { node { id name mac vlan network { id name } ipAddresses(first: 10) { edges { node { id address } } } } }
        }
        assignments(first: 10, orderBy: { field: UPDATED_AT, direction: DESC }) @include(if: $infra) {
          edges { node { id status statusReason desiredState observedState generation updatedAt node { id name } } }
        }
      }
    }
  }
`);

export default function VMPage() {
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const { infra, known } = useInfraAccess();
  const [{ data, error, fetching }, reexecute] = useQuery({ query: VMDocument, variables: { id, infra }, pause: !known });
  const { events, error: liveError } = useVMEvents({ id });
  // The event carries the status; the assignment and ports change with it, so read them again
  // (the shown data stays until the answer arrives: no flicker).
  const latest = events?.[id]?.updatedAt;
  useEffect(() => {
    if (latest) reexecute({ requestPolicy: 'network-only' });
  }, [latest, reexecute]);
  if (error) return <Problem error={error} title="The VM could not be loaded" />;
  if (!data && (fetching || !known)) return <Loading what="Loading the VM" />;
  const loaded = data?.node && data.node.__typename === 'VirtualMachine' ? data.node : null;
  if (!loaded) {
    return (
      <div>
        <h1>VM not found</h1>
        <p>There is no virtual machine {id} you may see. <Link to="/vms">All VMs</Link></p>
      </div>
    );
  }
  const vm = withEvent(loaded, events?.[loaded.id]);
  const ports = (vm.ports.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const assignments = (vm.assignments?.edges ?? []).flatMap((e) => (e?.node ? [e.node] : []));
  const policy = describePolicy(vm.schedulePolicy);

  return (
    <div>
      <div className="breadcrumbs"><Link to="/vms">Virtual machines</Link><span>{vm.name}</span></div>
      <div className="spread">
        <h1>
          {vm.name} <StatusBadge status={vm.status} title={vmStatusTitle(vm.status, vm.statusReason)} />
        </h1>
        <VMActions vm={vm} onDeleted={() => navigate('/vms')} />
      </div>
      <Problem error={liveError} title="Live updates stopped" />
      <p data-testid="status-reason" className="muted">{vm.statusReason || 'No status reason.'}</p>
      {vm.status === 'UNKNOWN' && (
        <p className="small" data-testid="status-unknown">
          The VM's {vm.node ? <>node <Link to={`/nodes/${vm.node.id}`}>{vm.node.name}</Link></> : 'node'} is DOWN: nobody can tell whether
          it runs. It reads its real status again when the node reports; an operator can force delete it to free its capacity.
        </p>
      )}
      <div className="grid">
        <section className="card">
          <h3>Placement</h3>
          <dl className="dl">
            <dt>Tenant</dt><dd><Link to={`/tenants/${vm.tenant.id}`}>{vm.tenant.name}</Link></dd>
            <dt>Region</dt><dd>{vm.region.name}</dd>
            <dt>Zone</dt><dd data-testid="vm-zone">{vm.availabilityZone?.name ?? '—'}</dd>
            {infra && <><dt>Cluster</dt><dd>{vm.cluster ? <Link to={`/clusters/${vm.cluster.id}`}>{vm.cluster.name}</Link> : '—'}</dd>
            <dt>Node</dt><dd data-testid="vm-node">{vm.node ? <Link to={`/nodes/${vm.node.id}`}>{vm.node.name}</Link> : 'not placed'}</dd></>}
            {vm.regionService && <><dt>Service</dt><dd><Link to={`/services/${vm.regionService.id}`}>{vm.regionService.name}</Link></dd></>}
          </dl>
        </section>
        <section className="card">
          <h3>Resources</h3>
          <dl className="dl">
            <dt>Flavor</dt><dd>{vm.flavor.name} ({formatNumber(vm.flavor.vcpus)} vCPU, {formatSize(vm.flavor.memoryMB, 'MiB')})</dd>
            <dt>Image</dt><dd>{vm.image ? `${vm.image.name}${vm.image.osName ? ` (${vm.image.osName} ${vm.image.osVersion ?? ''})` : ''}` : 'none'}</dd>
            <dt>Allocated</dt><dd>{formatNumber(vm.allocatedVcpus)} vCPU · {formatSize(vm.allocatedMemoryMB, 'MiB')} · {formatSize(vm.allocatedDiskGB, 'GiB')} disk</dd>
            <dt>Type</dt><dd>{vm.type.toLowerCase()} · boot from {vm.bootDevice.toLowerCase()}</dd>
          </dl>
          {!vm.regionService && <ResizeVM id={vm.id} status={vm.status} flavorID={vm.flavor.id} />}
        </section>
        <section className="card" data-testid="vm-guest">
          <h3>Guest</h3>
          <dl className="dl">
            <dt>State</dt><dd><StatusBadge status={vm.guestState} title={guestStateTitle(vm.guestState)} /> <span className="small muted">{guestStateTitle(vm.guestState)}</span></dd>
            <dt>Ready since</dt><dd>{vm.guestReadyAt ? formatDateTime(vm.guestReadyAt) : '—'}</dd>
            <dt>Host name</dt><dd>{vm.guestHostname || '—'}</dd>
            <dt>Addresses</dt><dd data-testid="guest-addresses">{(vm.guestAddresses ?? []).join(', ') || '—'}</dd>
          </dl>
        </section>
        {(vm.routes ?? []).length > 0 && (
          <section className="card" data-testid="vm-routes">
            <h3>Routes</h3>
            <dl className="dl">
              {(vm.routes ?? []).map((r) => (
                <Fragment key={r.address}>
                  <dt><code>{r.address}/32</code></dt>
                  <dd>
                    {r.announced ? 'announced' : 'not announced'} by {r.node} · namespace <code>{r.namespace}</code> · next hop <code>{r.linkAddress || '—'}</code>
                    <span className="small muted"> · {formatDateTime(r.updatedAt)}</span>
                  </dd>
                </Fragment>
              ))}
            </dl>
          </section>
        )}
        <section className="card">
          <h3>Record</h3>
          <dl className="dl">
            <dt>ID</dt><dd><code>{vm.id}</code></dd>
            <dt>Created</dt><dd>{formatDateTime(vm.createdAt)}</dd>
            <dt>Status since</dt><dd>{formatDateTime(vm.statusChangedAt)}</dd>
            <dt>Revision</dt><dd>{vm.revision}</dd>
            {(vm.revisionHistory ?? []).length > 0 && <><dt>Earlier</dt><dd className="small">{(vm.revisionHistory ?? []).map((h) => `r${h.revision}: ${h.flavorName} (${h.vcpus} vCPU)`).join(' · ')}</dd></>}
            <dt>Labels</dt><dd>{formatLabels(vm.labels) || '—'}</dd>
            {vm.description && <><dt>Description</dt><dd>{vm.description}</dd></>}
          </dl>
        </section>
      </div>

      <VMTimeline id={vm.id} status={vm.status} />
      {infra && <h2>Assignment</h2>}
      {!infra ? null : assignments.length === 0 ? (
        <p className="muted">No assignment yet: the VM has not been handed to a node agent.</p>
      ) : (
        <table aria-label="Assignments">
          <thead><tr><th>Node</th><th>Desired</th><th>Status</th><th>Observed</th><th>Generation</th><th>Reason</th></tr></thead>
          <tbody>
            {assignments.map((a) => (
              <tr key={a.id}>
                <td><Link to={`/nodes/${a.node.id}`}>{a.node.name}</Link></td>
                <td>{a.desiredState.toLowerCase()}</td>
                <td><StatusBadge status={a.status} /></td>
                <td>{a.observedState ?? '—'}</td>
                <td>{a.generation}</td>
                <td className="small">{a.statusReason ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Ports and addresses</h2>
      {ports.length === 0 ? (
        <p className="muted">No ports attached.</p>
      ) : (
        <table aria-label="Ports">
          <thead><tr><th>Port</th><th>MAC</th><th>Network</th><th>VLAN</th><th>Addresses</th></tr></thead>
          <tbody>
            {ports.map((pt) => (
              <tr key={pt.id}>
                <td><Link to={`/network/trace/${pt.id}`}>{pt.name}</Link></td>
                <td><code>{pt.mac ?? '—'}</code></td>
                <td>{pt.network ? <Link to={`/network?from=${pt.network.id}&depth=2`}>{pt.network.name}</Link> : '—'}</td>
                <td>{pt.vlan ?? '—'}</td>
                <td>{(pt.ipAddresses.edges ?? []).map((e) => e?.node?.address).filter(Boolean).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <VMVolumes vmID={vm.id} tenantID={vm.tenant.id} refreshKey={latest} />
      <VMCopies vmID={vm.id} refreshKey={latest} />

      <VMConsole id={vm.id} />
      <VMUsage vmID={vm.id} />

      <h2>Schedule policy</h2>
      {policy.length === 0 ? (
        <p className="muted">Default placement: any cluster of the region.</p>
      ) : (
        <ul className="card policy-lines">{policy.map((l) => <li key={l}>{l}</li>)}</ul>
      )}
    </div>
  );
}
