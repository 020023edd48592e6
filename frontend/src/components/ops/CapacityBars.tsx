// Used/free bars for a capacity: vCPUs, memory and disk.
import { UsageBar } from '../UsageBar';
import { free, type Cap } from '../../lib/ops/capacity';
import { formatNumber, formatSize } from '../../lib/format';

export function CapacityBars({ cap }: { cap: Cap }) {
  return (
    <div>
      <UsageBar label="vCPUs" used={cap.cpuAllocated} total={cap.cpuCapacity} />
      <UsageBar label="Memory" used={cap.memoryAllocatedMB} total={cap.memoryCapacityMB} size="MiB" />
      <UsageBar label="Disk" used={cap.diskAllocatedGB} total={cap.diskCapacityGB} size="GiB" />
      <div className="muted small">
        free: {formatNumber(free(cap.cpuCapacity, cap.cpuAllocated))} vCPUs · {formatSize(free(cap.memoryCapacityMB, cap.memoryAllocatedMB), 'MiB')} · {formatSize(free(cap.diskCapacityGB, cap.diskAllocatedGB), 'GiB')} · {cap.readyNodes}/{cap.nodes} nodes ready
      </div>
    </div>
  );
}
