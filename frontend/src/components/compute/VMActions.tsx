// Start, stop, reboot and delete buttons for one VM; delete asks for confirmation first.
import { useState } from 'react';
import { useMutation } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../Problem';

const StartDocument = graphql(`mutation StartVM($id: ID!) { startVirtualMachine(id: $id) { id status statusReason updatedAt } }`);
const StopDocument = graphql(`mutation StopVM($id: ID!) { stopVirtualMachine(id: $id) { id status statusReason updatedAt } }`);
const RebootDocument = graphql(`mutation RebootVM($id: ID!) { rebootVirtualMachine(id: $id) { id status statusReason updatedAt } }`);
const DeleteDocument = graphql(`mutation DeleteVM($id: ID!) { deleteVirtualMachine(id: $id) }`);

/** Which actions make sense in a status (the server has the last word). */
export function allowedActions(status: string) {
  const busy = ['INITIALIZING', 'SCHEDULED', 'CREATING', 'STARTING', 'STOPPING', 'REBOOTING', 'DELETING', 'DELETED'].includes(status);
  return {
    start: status === 'STOPPED' || status === 'ERROR',
    stop: status === 'ACTIVE' || status === 'ERROR',
    reboot: status === 'ACTIVE',
    delete: status !== 'DELETING' && status !== 'DELETED',
    busy,
  };
}

/** The action buttons; onDeleted runs after a successful delete. */
export function VMActions({ vm, compact = false, onDeleted }: { vm: { id: string; name: string; status: string }; compact?: boolean; onDeleted?: () => void }) {
  const [start, doStart] = useMutation(StartDocument);
  const [stop, doStop] = useMutation(StopDocument);
  const [reboot, doReboot] = useMutation(RebootDocument);
  const [del, doDelete] = useMutation(DeleteDocument);
  const [confirming, setConfirming] = useState(false);
  const can = allowedActions(vm.status);
  const running = start.fetching || stop.fetching || reboot.fetching || del.fetching;
  const error = start.error || stop.error || reboot.error || del.error;
  const vars = { id: vm.id };

  return (
    <div className="vm-actions">
      <div className="row">
        <button type="button" disabled={running || !can.start} onClick={() => doStart(vars)}>Start</button>
        <button type="button" disabled={running || !can.stop} onClick={() => doStop(vars)}>Stop</button>
        <button type="button" disabled={running || !can.reboot} onClick={() => doReboot(vars)}>Reboot</button>
        {!confirming ? (
          <button type="button" className="danger" disabled={running || !can.delete} onClick={() => setConfirming(true)}>Delete</button>
        ) : (
          <span className="row confirm" role="group" aria-label={`Confirm deleting ${vm.name}`}>
            {!compact && <span>Delete {vm.name}?</span>}
            <button
              type="button"
              className="danger"
              disabled={running}
              onClick={async () => {
                const r = await doDelete(vars);
                setConfirming(false);
                if (!r.error) onDeleted?.();
              }}
            >
              Yes, delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>Cancel</button>
          </span>
        )}
      </div>
      <Problem error={error} />
    </div>
  );
}
