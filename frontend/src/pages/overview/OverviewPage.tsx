// Overview: capacity per region and datacenter, nodes by state, open alerts by severity and the
// latest audit log entries; every number links to the list it counts. A tenant member, who may
// read none of these, sees the fatal alerts affecting their VMs and their tenants instead: VMs by
// status, services and quota usage.
import { NodeCounts, AlertCounts } from '../../components/ops/StateCounts';
import { RegionCapacity } from '../../components/ops/RegionCapacity';
import { RecentActivity } from '../../components/ops/RecentActivity';
import { FatalAlertCount, TenantOverview } from '../../components/ops/TenantOverview';
import { Loading } from '../../components/Loading';
import { useInfraAccess } from '../../components/compute/access';
import { useAuth } from '../../api/auth';
import '../../components/ops/ops.css';

export default function OverviewPage() {
  const { infra, known } = useInfraAccess();
  if (!known) return <Loading what="Loading your roles" />;
  return infra ? <FabricOverview /> : <TenantsOverview />;
}

function FabricOverview() {
  return (
    <div>
      <h1>Overview</h1>
      <div className="ops-cols">
        <section>
          <h2>Nodes by state</h2>
          <NodeCounts />
          <h2>Open alerts by severity</h2>
          <AlertCounts />
          <h2>Regions and datacenters</h2>
          <RegionCapacity />
        </section>
        <section>
          <h2>Recent activity</h2>
          <RecentActivity />
        </section>
      </div>
    </div>
  );
}

function TenantsOverview() {
  const { me } = useAuth();
  const tenants = new Map<string, { id: string; name: string }>();
  for (const e of me?.roleBindings.edges ?? []) if (e?.node?.tenant) tenants.set(e.node.tenant.id, e.node.tenant);
  return (
    <div>
      <h1>Overview</h1>
      {tenants.size === 0 && <p className="muted">You hold no role yet: ask an administrator for one.</p>}
      {tenants.size > 0 && <FatalAlertCount />}
      {[...tenants.values()].map((t) => <TenantOverview key={t.id} tenant={t} />)}
    </div>
  );
}
