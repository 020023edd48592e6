// Used/free bars for a capacity: vCPUs, memory and disk.
import { UsageBar } from '../UsageBar';
import { free, type Cap } from '../../lib/ops/capacity';
import { gb, mb } from '../../lib/ops/format';

export function CapacityBars({ cap }: { cap: Cap }) {
  return (
    <div>
      <UsageBar label="vCPUs" used={cap.cpuAllocated} total={cap.cpuCapacity} />
      <UsageBar label="Memory GiB" used={Math.round(cap.memoryAllocatedMB / 1024)} total={Math.round(cap.memoryCapacityMB / 1024)} />
      <UsageBar label="Disk GB" used={cap.diskAllocatedGB} total={cap.diskCapacityGB} />
      <div className="muted small">
        free: {free(cap.cpuCapacity, cap.cpuAllocated)} vCPUs · {mb(free(cap.memoryCapacityMB, cap.memoryAllocatedMB))} · {gb(free(cap.diskCapacityGB, cap.diskAllocatedGB))} · {cap.readyNodes}/{cap.nodes} nodes ready
      </div>
    </div>
  );
}
