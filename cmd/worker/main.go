// Command worker runs VirtFlow's asynchronous controllers (Asynq task handlers, reconcile
// loops, the node monitor, audit retention) against PostgreSQL (DATABASE_URL) and Redis
// (REDIS_URL). Run as many as needed; in the embedded single-process mode the server runs one
// itself.
//
// It carries out VM create/start/stop/reboot/delete tasks (package provision), relays the
// transactional outbox to Redis, retries or fails VMs stuck in a transitional state, and
// competes for the node-monitor lease. VIRTFLOW_WORKER_QUEUES picks the queues it serves
// (e.g. "region:tokyo1,default"), so a worker can run per region; empty serves all.
package main

import "github.com/virtflow/virtflow/internal/app"

func main() {
	app.Main("worker", app.RunWorker)
}
