// The tooltip of a device in a rack elevation: name, units, model, node state, allocation,
// VMs, alerts and maintainers.
import { unitRange } from '../../lib/rack/layout';
import { nodeSwatch } from '../../lib/rack/colors';
import { formatSizeOf, formatNumber } from '../../lib/format';
import { alertText, type ElevationDeviceView } from './types';

export function DeviceTooltipBody({ d }: { d: ElevationDeviceView }) {
  const n = d.node;
  return (
    <div className="rack-tip">
      <strong>{d.name}</strong>
      <div>
        {unitRange(d.position, d.height)} · {d.height}U · {d.face.toLowerCase()}
        {d.fullDepth ? ', full depth' : ', half depth'}
      </div>
      <div>
        {d.model} · {d.kind.toLowerCase()}
        {d.role ? ` (${d.role.replace(/_/g, ' ').toLowerCase()})` : ''} · {d.lifecycle.toLowerCase()}
      </div>
      {n ? (
        <>
          <div>
            Node: {nodeSwatch(n).label.toLowerCase()}
            {n.cordoned && n.status !== 'DOWN' ? ` (${n.status.replace(/_/g, ' ').toLowerCase()})` : ''}
          </div>
          <div>
            vCPU {n.cpuAllocated}/{n.cpuCapacity} · memory {formatSizeOf(n.memoryAllocatedMB, n.memoryCapacityMB, 'MiB')}
          </div>
          <div>VMs: {formatNumber(n.vmCount)}</div>
        </>
      ) : (
        <div>No compute node</div>
      )}
      <div>Alerts: {alertText(d.alerts)}</div>
      <div>Maintainers: {d.maintainers.length ? d.maintainers.map((m) => m.name + (m.group ? ' (group)' : '')).join(', ') : 'none'}</div>
    </div>
  );
}
