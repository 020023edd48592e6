// /dcim/import: bulk import and export of devices, ports and cables as CSV. Pick or paste a
// file, preview it (a dry run: every row with its errors, by row and column), then apply it:
// the server creates all rows in one transaction, or none when any row fails. "Export" downloads
// the same columns, so an export is a template and a backup.
import { useState, type ChangeEvent } from 'react';
import { useClient, useMutation } from 'urql';
import { graphql } from '../../gql';
import type { DcimImportKind, ImportDcimMutation } from '../../gql/graphql';
import { Message, Problem } from '../../components/Problem';
import { formatNumber } from '../../lib/format';
import './import.css';

const ImportDocument = graphql(`
  mutation ImportDCIM($kind: DCIMImportKind!, $csv: String!, $dryRun: Boolean!) {
    importDCIM(kind: $kind, csv: $csv, dryRun: $dryRun) {
      kind dryRun applied columns errorCount
      rows { row name id errors { column message } }
    }
  }
`);

const ExportDocument = graphql(`
  query ExportDCIM($kind: DCIMImportKind!) {
    exportDCIM(kind: $kind)
  }
`);

type Result = ImportDcimMutation['importDCIM'];

const KINDS: { kind: DcimImportKind; label: string; example: string }[] = [
  { kind: 'HOSTS', label: 'Devices', example: 'name,kind,rack,position,height,model,serial_number\nsrv-101,server,rack-3-7,12,2,R650,SN-101' },
  { kind: 'PORTS', label: 'Ports', example: 'host,name,mac,speed_mbps\nsrv-101,eth0,aa:bb:cc:00:01:01,25000' },
  { kind: 'CABLES', label: 'Cables', example: 'a_host,a_port,b_host,b_port,kind,length_m\nsrv-101,eth0,leaf-3-7,swp12,dac,1.5' },
];

/** The import and export page. */
export default function ImportPage() {
  const client = useClient();
  const [kind, setKind] = useState<DcimImportKind>('HOSTS');
  const [csv, setCSV] = useState('');
  const [checked, setChecked] = useState<{ csv: string; kind: DcimImportKind; result: Result } | null>(null);
  const [applied, setApplied] = useState<Result | null>(null);
  const [exportError, setExportError] = useState<string | null>(null);
  const [run, runImport] = useMutation(ImportDocument);
  const spec = KINDS.find((k) => k.kind === kind)!;

  const pick = async (e: ChangeEvent<HTMLInputElement>) => {
    const f = e.target.files?.[0];
    if (f) setCSV(await f.text());
  };
  const send = async (dryRun: boolean) => {
    setApplied(null);
    const r = await runImport({ kind, csv, dryRun });
    const result = r.data?.importDCIM;
    if (!result) return;
    if (dryRun || !result.applied) setChecked({ csv, kind, result });
    if (!dryRun && result.applied) {
      setApplied(result);
      setChecked(null);
      setCSV('');
    }
  };
  const download = async () => {
    setExportError(null);
    const r = await client.query(ExportDocument, { kind }, { requestPolicy: 'network-only' }).toPromise();
    if (r.error || r.data?.exportDCIM == null) {
      setExportError(r.error?.message ?? 'export failed');
      return;
    }
    const url = URL.createObjectURL(new Blob([r.data.exportDCIM], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `virtflow-${kind.toLowerCase()}.csv`;
    a.click();
    URL.revokeObjectURL(url);
  };
  const current = checked && checked.csv === csv && checked.kind === kind ? checked.result : null;
  const canApply = current !== null && current.errorCount === 0 && current.rows.length > 0;

  return (
    <>
      <h1>Import and export</h1>
      <p className="muted">
        Devices, then ports, then cables: each file names what it refers to (a rack by name or datacenter/floor/rack, a
        device by name, a port by device and name). Preview checks every row; Apply writes all of them in one
        transaction, or nothing when a row fails.
      </p>
      <div className="card import-card">
        <fieldset className="import-kind">
          <legend>What the file holds</legend>
          {KINDS.map((k) => (
            <label key={k.kind}>
              <input type="radio" name="kind" value={k.kind} checked={kind === k.kind} onChange={() => setKind(k.kind)} /> {k.label}
            </label>
          ))}
        </fieldset>
        <div className="import-actions">
          <button type="button" onClick={() => void download()}>
            Export {spec.label.toLowerCase()} (CSV)
          </button>
          {exportError && <Message kind="error">{exportError}</Message>}
        </div>
        <label className="import-file">
          CSV file <input type="file" accept=".csv,text/csv" onChange={(e) => void pick(e)} />
        </label>
        <label className="import-text">
          CSV text
          <textarea
            value={csv}
            onChange={(e) => setCSV(e.target.value)}
            rows={8}
            spellCheck={false}
            placeholder={spec.example}
          />
        </label>
        <div className="import-actions">
          <button type="button" disabled={!csv.trim() || run.fetching} onClick={() => void send(true)}>
            Preview
          </button>
          <button type="button" className="primary" disabled={!canApply || run.fetching} onClick={() => void send(false)}>
            Apply
          </button>
          {current && current.errorCount > 0 && (
            <span className="muted">Fix the rows in error and preview again: nothing is imported while a row fails.</span>
          )}
        </div>
        <Problem error={run.error} title="The file was refused" />
        {applied && (
          <Message kind="ok">
            Imported {formatNumber(applied.rows.length)} {KINDS.find((k) => k.kind === applied.kind)?.label.toLowerCase()}.
          </Message>
        )}
      </div>
      {current && <Preview result={current} />}
    </>
  );
}

/** The rows of a checked file, errors first in their cells. */
function Preview({ result }: { result: Result }) {
  return (
    <section className="card" aria-label="Preview">
      <h2>
        Preview: {formatNumber(result.rows.length)} rows,{' '}
        <span data-testid="import-error-count">{formatNumber(result.errorCount)}</span> in error
      </h2>
      {!result.dryRun && !result.applied && <Message kind="error">Nothing was imported: fix the rows in error.</Message>}
      <table className="import-preview">
        <thead>
          <tr>
            <th scope="col">Row</th>
            <th scope="col">Record</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {result.rows.map((r) => (
            <tr key={r.row} data-testid="import-row" data-row={r.row} className={r.errors.length ? 'import-bad' : 'import-ok'}>
              <td>{r.row}</td>
              <td>{r.name}</td>
              <td>
                {r.errors.length === 0 ? (
                  'ok'
                ) : (
                  <ul>
                    {r.errors.map((e, i) => (
                      <li key={i}>
                        {e.column && <code>{e.column}</code>} {e.message}
                      </li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
