// Package imagestore holds the bytes of VirtFlow's images on the server and drives an
// Image's lifecycle:
//
//	PENDING ──(upload starts / fetch task runs)──▶ DOWNLOADING ──(verified)──▶ ACTIVE
//	                                                    └──(checksum, size, format, source)──▶ ERROR
//
// Bytes arrive two ways. An image whose source is an http(s) URL is fetched by the worker
// (task TypeFetch, enqueued through the transactional outbox in the transaction that
// created the image, so it survives a crash): the download resumes with a Range request
// after a failed attempt, and Asynq retries it with backoff until the last attempt sets
// ERROR. An image whose source is "upload" receives its bytes through
// PUT /images/{id}/data (see Receive): one request, or chunks with Content-Range that can
// be resumed after an interruption. Either way the bytes go to a part file
// (<Dir>/<id>.<session>.part: one per upload session, "fetch" or "import"), are
// verified on arrival (sha256 against the image's checksum when one was given, else the
// checksum is recorded from them; size against the configured limit; qcow2 magic against
// the format) and renamed to <Dir>/<id>.img.
//
// Nodes read the bytes with GET /images/{id}/data (Open, served with http.ServeContent,
// so Range requests resume an interrupted transfer). Every status change is audited in its
// transaction: as the uploading viewer, or as the worker system actor.
//
// The directory is shared by every server and worker process of an installation (one
// host, or a shared filesystem). One upload of an image runs at a time, whichever server
// receives it: the upload session (Image.upload_id and upload_expires_at) is claimed,
// renewed and ended by row updates in the database, never by a lock held while a client
// sends; a session lapses after Config.UploadIdle without bytes, and only the session
// holding the image completes it.
package imagestore
