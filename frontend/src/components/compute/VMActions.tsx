// Start, stop, reboot and delete buttons for one VM; delete asks for confirmation first.
// Operators also get force delete for a VM whose node cannot confirm a delete (see canForceDelete).
import { useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import { useAuth } from '../../api/auth';
import { canForceDelete, forceDeleteWarning } from '../../lib/compute/vmStatus';
import { Problem } from '../Problem';

const StartDocument = graphql(`mutation StartVM($id: ID!) { startVirtualMachine(id: $id) { id status statusReason updatedAt } }`);
const StopDocument = graphql(`mutation StopVM($id: ID!) { stopVirtualMachine(id: $id) { id status statusReason updatedAt } }`);
const RebootDocument = graphql(`mutation RebootVM($id: ID!) { rebootVirtualMachine(id: $id) { id status statusReason updatedAt } }`);
const DeleteDocument = graphql(`mutation DeleteVM($id: ID!, $force: Boolean) { deleteVirtualMachine(id: $id, force: $force) }`);

/** Which actions make sense in a status (the server has the last word); UNKNOWN allows only delete. */
export function allowedActions(status: string) {
  const busy = ['INITIALIZING', 'SCHEDULED', 'CREATING', 'STARTING', 'STOPPING', 'REBOOTING', 'MOVING', 'DELETING', 'DELETED'].includes(status);
  return {
    start: status === 'STOPPED' || status === 'ERROR',
    stop: status === 'ACTIVE' || status === 'ERROR',
    reboot: status === 'ACTIVE',
    delete: status !== 'DELETING' && status !== 'DELETED',
    busy,
  };
}

type ActionVM = { id: string; name: string; status: string; node?: { name: string; status: string } | null };

/** The action buttons; onDeleted runs after a successful delete. */
export function VMActions({ vm, compact = false, onDeleted }: { vm: ActionVM; compact?: boolean; onDeleted?: () => void }) {
  const { isOperator } = useAuth();
  const [start, doStart] = useMutation(StartDocument);
  const [stop, doStop] = useMutation(StopDocument);
  const [reboot, doReboot] = useMutation(RebootDocument);
  const [del, doDelete] = useMutation(DeleteDocument);
  const [confirming, setConfirming] = useState<'' | 'delete' | 'force'>('');
  const can = allowedActions(vm.status);
  const force = canForceDelete({ status: vm.status, nodeStatus: vm.node?.status }, isOperator);
  const running = start.fetching || stop.fetching || reboot.fetching || del.fetching;
  const error = start.error || stop.error || reboot.error || del.error;
  const vars = { id: vm.id };

  return (
    <div className="vm-actions">
      <div className="row">
        <button type="button" disabled={running || !can.start} onClick={() => doStart(vars)}>Start</button>
        <button type="button" disabled={running || !can.stop} onClick={() => doStop(vars)}>Stop</button>
        <button type="button" disabled={running || !can.reboot} onClick={() => doReboot(vars)}>Reboot</button>
        {!confirming && (
          <button type="button" className="danger" disabled={running || !can.delete} onClick={() => setConfirming('delete')}>Delete</button>
        )}
        {!confirming && force && (
          <button type="button" className="danger" disabled={running} title={forceDeleteWarning(vm)} onClick={() => setConfirming('force')}>Force delete</button>
        )}
        {confirming && (
          <span className="row confirm" role="group" aria-label={`Confirm ${confirming === 'force' ? 'force ' : ''}deleting ${vm.name}`}>
            {confirming === 'force'
              ? <span className="small" data-testid="force-delete-warning" title={forceDeleteWarning(vm)}>{compact ? 'Force delete?' : forceDeleteWarning(vm)}</span>
              : !compact && <span>Delete {vm.name}?</span>}
            <button
              type="button"
              className="danger"
              disabled={running}
              onClick={async () => {
                const r = await doDelete(confirming === 'force' ? { ...vars, force: true } : vars);
                setConfirming('');
                if (!r.error) onDeleted?.();
              }}
            >
              {confirming === 'force' ? 'Yes, force delete' : 'Yes, delete'}
            </button>
            <button type="button" onClick={() => setConfirming('')}>Cancel</button>
          </span>
        )}
      </div>
      <Problem error={error} />
    </div>
  );
}
