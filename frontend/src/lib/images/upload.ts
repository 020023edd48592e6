// Uploading an image's bytes to PUT /images/{id}/data in chunks with Content-Range, so that
// progress can be shown and an interrupted upload resumes where the server says it stopped.
import { getToken } from '../../api/token';

/** The size of one upload chunk: 8 MiB. */
export const CHUNK_BYTES = 8 << 20;

/** What the server answers once the last chunk has arrived. */
export interface UploadResult {
  id: number;
  status: string;
  statusReason?: string;
  sizeBytes: number;
  checksum?: string;
}

/** The next byte to send after a 308 answer's Range header ("bytes=0-N"), or 0 without one. */
export function resumeOffset(range: string | null): number {
  const m = range ? /^bytes=0-(\d+)$/.exec(range.trim()) : null;
  return m ? Number(m[1]) + 1 : 0;
}

/** The Content-Range header of the chunk [start, end) of a file of total bytes. */
export function contentRange(start: number, end: number, total: number): string {
  return `bytes ${start}-${end - 1}/${total}`;
}

async function errorOf(resp: Response): Promise<Error> {
  try {
    const body = (await resp.json()) as { errors?: { message: string }[] };
    return new Error(body.errors?.[0]?.message ?? `${resp.status} ${resp.statusText}`);
  } catch {
    return new Error(`${resp.status} ${resp.statusText}`);
  }
}

/**
 * The Upload-ID of each image's upload started from this page: the server admits one upload
 * per image at a time and takes later chunks only with the id its first answer gave.
 */
const uploadIds = new Map<string, string>();

/**
 * Sends file as image id's bytes, chunk by chunk, calling onProgress with the bytes the server
 * has; it first asks how much arrived already, so calling it again after a failure resumes.
 * While another client uploads the image the server answers 409, which is thrown.
 */
export async function uploadImage(id: string, file: Blob, onProgress: (sent: number, total: number) => void): Promise<UploadResult> {
  const url = `/images/${encodeURIComponent(id)}/data`;
  const auth: Record<string, string> = {};
  const t = getToken();
  if (t) auth.Authorization = `Bearer ${t}`;
  const total = file.size;
  if (total === 0) throw new Error('the file is empty');
  const session = (): Record<string, string> => {
    const u = uploadIds.get(id);
    return u ? { 'Upload-ID': u } : {};
  };
  let probe = await fetch(url, { method: 'PUT', headers: { ...auth, ...session(), 'Content-Range': `bytes */${total}` } });
  if (probe.status === 409 && uploadIds.has(id)) {
    // Our earlier upload lapsed: start over.
    uploadIds.delete(id);
    probe = await fetch(url, { method: 'PUT', headers: { ...auth, 'Content-Range': `bytes */${total}` } });
  }
  if (probe.status !== 308 && !probe.ok) throw await errorOf(probe);
  let offset = probe.status === 308 ? resumeOffset(probe.headers.get('Range')) : 0;
  onProgress(offset, total);
  for (;;) {
    const end = Math.min(offset + CHUNK_BYTES, total);
    const resp = await fetch(url, {
      method: 'PUT',
      headers: { ...auth, ...session(), 'Content-Range': contentRange(offset, end, total) },
      body: file.slice(offset, end),
    });
    if (resp.ok) {
      uploadIds.delete(id);
      onProgress(total, total);
      return (await resp.json()) as UploadResult;
    }
    if (resp.status !== 308) throw await errorOf(resp);
    const u = resp.headers.get('Upload-ID');
    if (u) uploadIds.set(id, u);
    offset = resumeOffset(resp.headers.get('Range'));
    onProgress(offset, total);
  }
}
