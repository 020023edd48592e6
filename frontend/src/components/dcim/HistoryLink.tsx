// The link from an object's page to its change history (/changes filtered to the object).
import { Link } from 'react-router';

/** "History" for the object of type (ent type name, e.g. Rack) and id. */
export function HistoryLink({ type, id }: { type: string; id: string }) {
  return (
    <Link to={`/changes?objectType=${encodeURIComponent(type)}&objectID=${encodeURIComponent(id)}`} className="history-link">
      History
    </Link>
  );
}
