// A tenant's quotas per host group with usage bars (vCPUs against the tighter limit, memory, storage).
import { useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';
import { Loading } from '../Loading';
import { UsageBar } from '../UsageBar';

const QuotaUsageDocument = graphql(`
  query TenantQuotaUsage($tenantID: ID!) {
    quotaUsage(tenantID: $tenantID) {
      quota { id cpuPercent vcpus memoryMB storageGB }
      hostGroupID hostGroupName groupCores vcpuLimit usedVCPUs memoryMB usedMemoryMB storageGB usedStorageGB
    }
  }
`);

export function QuotaUsageTable({ tenantID }: { tenantID: string }) {
  const [{ data, error, fetching }] = useQuery({ query: QuotaUsageDocument, variables: { tenantID } });
  if (error) return <Problem error={error} />;
  if (!data) return fetching ? <Loading /> : null;
  if (data.quotaUsage.length === 0) return <p className="muted">No quotas: this tenant cannot place VMs in any host group yet.</p>;
  return (
    <table className="ops-table" aria-label="Quotas">
      <thead>
        <tr><th>Host group</th><th>vCPUs</th><th>Memory</th><th>Storage</th><th>Limits</th></tr>
      </thead>
      <tbody>
        {data.quotaUsage.map((q) => (
          <tr key={q.quota.id} data-testid={`quota-${q.hostGroupName}`}>
            <td>{q.hostGroupName}</td>
            <td style={{ minWidth: 200 }}><UsageBar used={q.usedVCPUs} total={q.vcpuLimit} /></td>
            <td style={{ minWidth: 200 }}><UsageBar used={q.usedMemoryMB} total={q.memoryMB} size="MiB" /></td>
            <td style={{ minWidth: 200 }}><UsageBar used={q.usedStorageGB} total={q.storageGB} size="GiB" /></td>
            <td className="small muted">
              {q.quota.cpuPercent}% of {q.groupCores} cores · {q.quota.vcpus || '∞'} vCPUs
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
