// What drainNode answered: the VMs that cannot move (with why) first, then those being moved.
import { Link } from 'react-router';
import type { DrainNodeMutation } from '../../gql/graphql';
import { StatusBadge } from '../StatusBadge';
import { Message } from '../Problem';

export function DrainReportView({ report }: { report: DrainNodeMutation['drainNode'] }) {
  return (
    <div className="drain-report" data-testid="drain-report">
      <h3>Drain report</h3>
      {report.unmovable.length > 0 ? (
        <Message kind="error">
          <strong>{report.unmovable.length} VM(s) cannot move:</strong>
          <ul>
            {report.unmovable.map((u) => (
              <li key={u.virtualMachine.id}>
                <Link to={`/vms/${u.virtualMachine.id}`}>{u.virtualMachine.name}</Link> — {u.reason}
              </li>
            ))}
          </ul>
        </Message>
      ) : (
        <p className="small">Every VM can move.</p>
      )}
      {report.moving.length > 0 ? (
        <>
          <p className="small">Moving {report.moving.length} VM(s):</p>
          <ul className="small">
            {report.moving.map((v) => (
              <li key={v.id}><Link to={`/vms/${v.id}`}>{v.name}</Link> <StatusBadge status={v.status} /></li>
            ))}
          </ul>
        </>
      ) : (
        <p className="small muted">No VMs to move.</p>
      )}
    </div>
  );
}
