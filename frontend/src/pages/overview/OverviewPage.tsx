// Overview: capacity per region and datacenter, nodes by state, open alerts by severity and the
// latest audit log entries; every number links to the list it counts.
import { NodeCounts, AlertCounts } from '../../components/ops/StateCounts';
import { RegionCapacity } from '../../components/ops/RegionCapacity';
import { RecentActivity } from '../../components/ops/RecentActivity';
import '../../components/ops/ops.css';

export default function OverviewPage() {
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
