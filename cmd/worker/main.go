// Command worker runs VirtFlow's asynchronous controllers (Asynq task handlers, reconcile
// loops, the node monitor, audit retention) against PostgreSQL (DATABASE_URL) and Redis
// (REDIS_URL). Run as many as needed; in the embedded single-process mode the server runs one
// itself.
//
// Today it serves the task queues with no task types yet: the provisioning pipeline (VM
// create/start/stop/reboot/delete, region-service reconcile, drain) comes with a later issue.
package main

import "github.com/virtflow/virtflow/internal/app"

func main() {
	app.Main("worker", app.RunWorker)
}
