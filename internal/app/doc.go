// Package app wires VirtFlow's processes from their configuration: it opens the backing
// services, loads the demo when asked, serves HTTP and runs the embedded worker, and shuts
// everything down gracefully when its context ends. The mains in cmd/ only parse flags and
// call into it.
//
// # Components
//
// A process is a list of components (Component: a name and Run(ctx) error) started by one
// errgroup (process.run) in two tiers: the serving tier (the HTTP servers) stops first when
// the context ends or any component fails, the background tier (the outbox relay, the
// worker's controllers) after it, so that what the last requests recorded is still relayed.
// Before any component starts, installHooks installs every ent hook of the process, in the
// order its comment states; nothing else calls ent's Use, which is not safe once the client
// is in use. The worker role is one list (workerRole.components): cmd/worker runs it beside
// its operations endpoint and the outbox relay, and cmd/server runs the very same list in its
// embedded mode (no DATABASE_URL), with only the task handlers' concurrency, queues and logger
// set differently.
//
// # One binary per role
//
// VirtFlow ships binaries that each run one role — server (with the worker role embedded
// when it is the only process), worker, nodeagent, the virtflow CLI and the Terraform
// provider — rather than one binary with roles chosen by a flag, as Nomad does. The node
// agent runs on every hypervisor and the CLI and provider on people's machines: they must
// link neither ent, lib/pq nor gqlgen (TestImportRules), which one binary could not keep
// true. Server and worker scale and are deployed separately (docker-compose, the systemd
// units, the Kubernetes manifests, one image holding both), and each binary's flags are its
// role's. The price is that the server and the worker share this package; until the
// composition root is split by role, cmd/worker links the gateway too.
package app
