// Images: the catalog with each image's status (PENDING, DOWNLOADING, ACTIVE, ERROR with the
// reason), size and checksum; import one from a URL (the server fetches it) or upload a file
// (sent in chunks to PUT /images/{id}/data, with progress, resumable).
import { useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import { graphql } from '../../gql';
import { Problem } from '../../components/Problem';
import { Loading } from '../../components/Loading';
import { StatusBadge } from '../../components/StatusBadge';
import { Pager, usePager } from '../../components/Pager';
import { uploadImage } from '../../lib/images/upload';
import { formatNumber } from '../../lib/format';
import '../../components/ops/ops.css';

const ImagesDocument = graphql(`
  query Images($first: Int, $after: Cursor, $last: Int, $before: Cursor) {
    images(first: $first, after: $after, last: $last, before: $before, orderBy: { field: NAME, direction: ASC }) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges { node { id name source format status statusReason sizeBytes checksum osName osVersion } }
    }
  }
`);

const CreateImageDocument = graphql(`
  mutation CreateImage($input: CreateImageInput!) {
    createImage(input: $input) { id status }
  }
`);

const IMAGES_CONTEXT = { additionalTypenames: ['Image'] };

type Format = 'QCOW2' | 'RAW' | 'ISO';

function size(bytes: number): string {
  if (!bytes) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${formatNumber(v, i ? 1 : 0)} ${units[i]}`;
}

export default function ImagesPage() {
  const pager = usePager(25);
  const [{ data, error, fetching }, refetch] = useQuery({ query: ImagesDocument, variables: { ...pager.vars }, context: IMAGES_CONTEXT });
  const [created, create] = useMutation(CreateImageDocument);
  const [name, setName] = useState('');
  const [format, setFormat] = useState<Format>('QCOW2');
  const [checksum, setChecksum] = useState('');
  const [mode, setMode] = useState<'url' | 'upload'>('url');
  const [url, setURL] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const [uploadError, setUploadError] = useState<string | null>(null);

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    setUploadError(null);
    const input = { name, format, source: mode === 'url' ? url : 'upload', ...(checksum ? { checksum } : {}) };
    const res = await create({ input }, IMAGES_CONTEXT);
    const id = res.data?.createImage.id;
    if (!id) return;
    if (mode === 'upload' && file) {
      try {
        await uploadImage(id, file, (sent, total) => setProgress({ sent, total }));
      } catch (err) {
        setUploadError(`Upload stopped: ${(err as Error).message}. Pick the same file again to resume.`);
      }
    }
    setName('');
    setURL('');
    setChecksum('');
    refetch({ requestPolicy: 'network-only' });
  }

  const rows = data?.images.edges?.flatMap((e) => (e?.node ? [e.node] : [])) ?? [];
  const ready = name !== '' && (mode === 'url' ? url !== '' : file !== null);
  return (
    <div>
      <h1>Images</h1>
      <p className="muted">
        An image is ACTIVE once the server holds its bytes and they matched the checksum; nodes cache each image once and boot VMs from a copy-on-write overlay of it.
      </p>
      <form className="card" onSubmit={onSubmit} aria-label="New image">
        <div className="fields">
        <label>Name <input value={name} onChange={(e) => setName(e.target.value)} required /></label>
        <label>
          Format{' '}
          <select value={format} onChange={(e) => setFormat(e.target.value as Format)}>
            <option value="QCOW2">qcow2</option>
            <option value="RAW">raw</option>
            <option value="ISO">ISO</option>
          </select>
        </label>
        <fieldset className="choice">
          <legend>Source</legend>
          <label><input type="radio" checked={mode === 'url'} onChange={() => setMode('url')} /> from a URL</label>
          <label><input type="radio" checked={mode === 'upload'} onChange={() => setMode('upload')} /> upload a file</label>
        </fieldset>
        {mode === 'url' ? (
          <label>URL <input type="url" value={url} onChange={(e) => setURL(e.target.value)} placeholder="https://…/image.qcow2" /></label>
        ) : (
          <label>File <input type="file" aria-label="Image file" onChange={(e) => setFile(e.target.files?.[0] ?? null)} /></label>
        )}
        <label>sha256 (optional) <input value={checksum} onChange={(e) => setChecksum(e.target.value)} placeholder="sha256:…" /></label>
        </div>
        <button type="submit" className="primary" disabled={!ready || created.fetching}>Create image</button>
      </form>
      {progress && (
        <p>
          <progress aria-label="Upload progress" value={progress.sent} max={progress.total} /> {size(progress.sent)} of {size(progress.total)}
        </p>
      )}
      {uploadError && <p className="muted" role="alert">{uploadError}</p>}
      <Problem error={error ?? created.error} />
      {!data && fetching ? <Loading /> : null}
      {data && rows.length === 0 && <p className="muted">No images yet.</p>}
      {rows.length > 0 && (
        <table className="ops-table" aria-label="Images">
          <thead>
            <tr><th>Name</th><th>Status</th><th>Format</th><th>Size</th><th>Source</th><th>Checksum</th></tr>
          </thead>
          <tbody>
            {rows.map((im) => (
              <tr key={im.id} data-testid={`image-${im.name}`}>
                <td>{im.name}{im.osName ? <span className="muted small"> {im.osName} {im.osVersion ?? ''}</span> : null}</td>
                <td>
                  <StatusBadge status={im.status} title={im.statusReason} />
                  {im.statusReason && im.status === 'ERROR' ? <div className="small">{im.statusReason}</div> : null}
                </td>
                <td>{im.format.toLowerCase()}</td>
                <td className="nowrap">{size(im.sizeBytes)}</td>
                <td className="small">{im.source}</td>
                <td className="small"><code title={im.checksum ?? undefined}>{im.checksum ? `${im.checksum.slice(0, 19)}…` : '—'}</code></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pageInfo={data?.images.pageInfo} total={data?.images.totalCount} pager={pager} />
    </div>
  );
}
