package provision

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/virtflow/virtflow/ent/assignment"
	"github.com/virtflow/virtflow/ent/virtualmachine"
)

// Task types of the VM state machine.
const (
	TypeVMCreate = "vm:create"
	TypeVMStart  = "vm:start"
	TypeVMStop   = "vm:stop"
	TypeVMReboot = "vm:reboot"
	TypeVMDelete = "vm:delete"
)

// Retry and timeout of every provisioning task.
const (
	MaxRetry    = 8
	TaskTimeout = 30 * time.Second
)

// Queue returns the queue of the tasks of VMs in region: "region:<name>", so that a worker
// can be deployed per region.
func Queue(region string) string { return "region:" + region }

// TaskOptions returns the Asynq options of a task kind: retries and timeout. The outbox
// relay applies them when it moves a task to Redis.
func TaskOptions(kind string) []asynq.Option {
	return []asynq.Option{asynq.MaxRetry(MaxRetry), asynq.Timeout(TaskTimeout)}
}

// RetryDelay is the backoff between attempts of a provisioning task: 1 s, 2 s, 4 s … up to
// one minute.
//
// A task that found something not ready yet (ErrNotReady) looks again after NotReadyDelay.
func RetryDelay(n int, err error, _ *asynq.Task) time.Duration {
	if errors.Is(err, ErrNotReady) {
		return NotReadyDelay
	}
	return min(time.Second<<min(n, 6), time.Minute)
}

// Payload is the payload of every VM task.
type Payload struct {
	VM int `json:"vm"`
	// From is the assignment generation the task moves from (0 for vm:create: there is no
	// assignment yet); the task produces generation From+1.
	From int64 `json:"from"`
}

func decode(t *asynq.Task) (Payload, error) {
	var p Payload
	if err := json.Unmarshal(t.Payload(), &p); err != nil || p.VM <= 0 {
		return p, fmt.Errorf("decode %s payload %q: %v: %w", t.Type(), t.Payload(), err, asynq.SkipRetry)
	}
	return p, nil
}

// action is what one task type does: the transitional state it serves and the desired state
// it gives the assignment.
type action struct {
	kind    string
	verb    string                  // for reasons: "start", "stop", …
	pending virtualmachine.Status   // the VM's state while the task is due
	desired assignment.DesiredState // what the node should make of the VM
	done    virtualmachine.Status   // the VM's state once the agent applied it
	from    []virtualmachine.Status // states the request is accepted in
	noop    []virtualmachine.Status // states in which the request changes nothing
}

var actions = map[string]action{
	TypeVMCreate: {kind: TypeVMCreate, verb: "create", pending: virtualmachine.StatusCreating,
		desired: assignment.DesiredStateRunning, done: virtualmachine.StatusActive},
	TypeVMStart: {kind: TypeVMStart, verb: "start", pending: virtualmachine.StatusStarting,
		desired: assignment.DesiredStateRunning, done: virtualmachine.StatusActive,
		from: []virtualmachine.Status{virtualmachine.StatusStopped, virtualmachine.StatusError},
		noop: []virtualmachine.Status{virtualmachine.StatusActive, virtualmachine.StatusStarting}},
	TypeVMStop: {kind: TypeVMStop, verb: "stop", pending: virtualmachine.StatusStopping,
		desired: assignment.DesiredStateStopped, done: virtualmachine.StatusStopped,
		from: []virtualmachine.Status{virtualmachine.StatusActive, virtualmachine.StatusError},
		noop: []virtualmachine.Status{virtualmachine.StatusStopped, virtualmachine.StatusStopping}},
	TypeVMReboot: {kind: TypeVMReboot, verb: "reboot", pending: virtualmachine.StatusRebooting,
		desired: assignment.DesiredStateRunning, done: virtualmachine.StatusActive,
		from: []virtualmachine.Status{virtualmachine.StatusActive},
		noop: []virtualmachine.Status{virtualmachine.StatusRebooting}},
	TypeVMDelete: {kind: TypeVMDelete, verb: "delete", pending: virtualmachine.StatusDeleting,
		desired: assignment.DesiredStateAbsent},
}
