// The overview of a tenant member (who may not read the fabric, nodes, alerts or the audit log):
// the open fatal alerts on the nodes running their VMs (the only alerts a tenant may read) and,
// per tenant of theirs, VMs by status and region services, each linking to the filtered list,
// and the tenant's quotas with their usage.
import { Link } from 'react-router';
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { CountTile } from './CountTile';
import { Problem } from '../Problem';
import { QuotaUsageTable } from './QuotaUsageTable';

const TenantCountsDocument = graphql(`
  query OverviewTenantCounts($tenantID: ID!) {
    vms: virtualMachines(where: { statusNEQ: DELETED, hasTenantWith: [{ id: $tenantID }] }) { totalCount }
    active: virtualMachines(where: { status: ACTIVE, hasTenantWith: [{ id: $tenantID }] }) { totalCount }
    busy: virtualMachines(where: { statusIn: [INITIALIZING, SCHEDULED, CREATING, STARTING, STOPPING, REBOOTING, MOVING, DELETING], hasTenantWith: [{ id: $tenantID }] }) { totalCount }
    stopped: virtualMachines(where: { status: STOPPED, hasTenantWith: [{ id: $tenantID }] }) { totalCount }
    failed: virtualMachines(where: { status: ERROR, hasTenantWith: [{ id: $tenantID }] }) { totalCount }
    unknown: virtualMachines(where: { status: UNKNOWN, hasTenantWith: [{ id: $tenantID }] }) { totalCount }
    services: regionServices(where: { statusNEQ: DELETED, hasTenantWith: [{ id: $tenantID }] }) { totalCount }
  }
`);

const FatalAlertsDocument = graphql(`
  query OverviewFatalAlerts {
    fatal: alerts(where: { status: OPEN, severity: FATAL }) { totalCount }
  }
`);

/** The open fatal alerts the viewer may read: for a tenant member, those affecting their VMs. */
export function FatalAlertCount() {
  const [{ data, error }] = useQuery({ query: FatalAlertsDocument });
  return (
    <>
      <Problem error={error} />
      <div className="count-row" aria-label="Open fatal alerts">
        <CountTile label="fatal alerts on your VMs' nodes" count={data?.fatal.totalCount} to="/alerts?status=OPEN&severity=FATAL" tone="bad" testid="tenant-alerts-FATAL" />
      </div>
    </>
  );
}

/** One tenant's counts and quotas. */
export function TenantOverview({ tenant }: { tenant: { id: string; name: string } }) {
  const [{ data, error }] = useQuery({ query: TenantCountsDocument, variables: { tenantID: tenant.id } });
  const vms = (status = '') => `/vms?tenant=${encodeURIComponent(tenant.id)}${status && `&status=${status}`}`;
  return (
    <section aria-label={`Tenant ${tenant.name}`} data-testid={`tenant-overview-${tenant.id}`}>
      <h2><Link to={`/tenants/${tenant.id}`}>{tenant.name}</Link></h2>
      <Problem error={error} />
      <div className="count-row" aria-label="Virtual machines by status">
        <CountTile label="VMs" count={data?.vms.totalCount} to={vms()} testid="tenant-vms" />
        <CountTile label="active" count={data?.active.totalCount} to={vms('ACTIVE')} tone="ok" testid="tenant-vms-ACTIVE" />
        <CountTile label="in progress" count={data?.busy.totalCount} to={vms()} tone="busy" testid="tenant-vms-busy" />
        <CountTile label="stopped" count={data?.stopped.totalCount} to={vms('STOPPED')} testid="tenant-vms-STOPPED" />
        <CountTile label="error" count={data?.failed.totalCount} to={vms('ERROR')} tone="bad" testid="tenant-vms-ERROR" />
        <CountTile label="unknown (node down)" count={data?.unknown.totalCount} to={vms('UNKNOWN')} tone="warn" testid="tenant-vms-UNKNOWN" />
        <CountTile label="region services" count={data?.services.totalCount} to={`/services?tenant=${encodeURIComponent(tenant.id)}`} testid="tenant-services" />
      </div>
      <h3>Quotas</h3>
      <QuotaUsageTable tenantID={tenant.id} />
    </section>
  );
}
