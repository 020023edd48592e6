package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/virtflow/virtflow/clients/apiclient"
)

func runLogin(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	endpoint := fs.String("endpoint", "", "API server, e.g. http://127.0.0.1:8080")
	token := fs.String("token", "", "an API token (virtflow checks it and stores it)")
	username := fs.String("username", "", "sign in with a password instead (asked on stdin; stores the 12-hour session token)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *endpoint == "" {
		*endpoint = a.endpoint
	}
	if *token == "" {
		*token = a.token
	}
	if *endpoint == "" || (*token == "" && *username == "") {
		return usagef("login needs --endpoint and --token (or --username)")
	}
	c, err := apiclient.New(*endpoint, *token)
	if err != nil {
		return err
	}
	if *username != "" {
		line, err := bufio.NewReader(a.io.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("read the password from stdin: %w", err)
		}
		var r struct {
			Login struct{ Token string }
		}
		if err := c.Do(ctx, `mutation($u: String!, $p: String!) { login(username: $u, password: $p) { token } }`,
			map[string]any{"u": *username, "p": strings.TrimRight(line, "\r\n")}, &r); err != nil {
			return err
		}
		c.Token = r.Login.Token
	}
	var me struct {
		Me struct{ ID, Username string }
	}
	if err := c.Do(ctx, `{ me { id username } }`, nil, &me); err != nil {
		return fmt.Errorf("the token does not work: %w", err)
	}
	path, err := a.configFile()
	if err != nil {
		return err
	}
	if err := saveConfig(path, Config{Endpoint: c.URL, Token: c.Token}); err != nil {
		return err
	}
	fmt.Fprintf(a.io.Stdout, "signed in to %s as %s; saved to %s\n", c.URL, me.Me.Username, path)
	return nil
}

// ---------------------------------------------------------------- vm

func runVM(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("vm create|start|stop|reboot|delete")
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("vm "+verb, flag.ContinueOnError)
	wait := fs.Bool("wait", false, "wait until the VM reaches its target state (ACTIVE, STOPPED, gone)")
	waitReady := fs.Bool("wait-ready", false, "create, start, reboot: also wait until the guest says it is up (guestState READY)")
	timeout := fs.Duration("timeout", 10*time.Minute, "how long --wait and --wait-ready wait")
	var in apiclient.CreateVirtualMachineInput
	var networks, keys stringList
	var image, zone, userData string
	force := false
	if verb == "create" {
		fs.StringVar(&in.Name, "name", "", "name (required)")
		fs.StringVar(&in.TenantID, "tenant", "", "tenant name or id (required)")
		fs.StringVar(&in.RegionID, "region", "", "region name or id (required)")
		fs.StringVar(&in.FlavorID, "flavor", "", "flavor name or id (required)")
		fs.StringVar(&image, "image", "", "image name or id")
		fs.StringVar(&zone, "zone", "", "availability zone name or id")
		fs.StringVar(&userData, "user-data", "", "#cloud-config")
		fs.Var(&networks, "network", "network name or id (repeatable)")
		fs.Var(&keys, "ssh-key", "SSH key name or id (repeatable)")
	}
	if verb == "delete" {
		fs.BoolVar(&force, "force", false, "operators: delete at once without waiting for the node's agent")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case verb == "create" && (in.Name == "" || in.TenantID == "" || in.RegionID == "" || in.FlavorID == "" || len(pos) != 0):
		return usagef("vm create --name NAME --tenant TENANT --region REGION --flavor FLAVOR [--image IMAGE] [--network NETWORK]... [--ssh-key KEY]... [--wait]   (names or ids)")
	case verb != "create" && len(pos) != 1:
		return usagef("vm %s VM (name or id) [--wait]", verb)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	var vm *apiclient.VMFields
	var target apiclient.VirtualMachineStatus
	switch verb {
	case "create":
		if err := a.resolveVMInput(ctx, c, &in, image, zone, networks, keys); err != nil {
			return err
		}
		in.UserData = optional(userData)
		r, err := apiclient.CreateVM(ctx, c, in)
		if err != nil {
			return err
		}
		vm, target = &r.CreateVirtualMachine.VMFields, apiclient.VirtualMachineStatusActive
	case "start", "stop", "reboot", "delete":
		id, err := a.ref(ctx, c, "vm", pos[0])
		if err != nil {
			return err
		}
		switch verb {
		case "start":
			r, err := apiclient.StartVM(ctx, c, id)
			if err != nil {
				return err
			}
			vm, target = &r.StartVirtualMachine.VMFields, apiclient.VirtualMachineStatusActive
		case "stop":
			r, err := apiclient.StopVM(ctx, c, id)
			if err != nil {
				return err
			}
			vm, target = &r.StopVirtualMachine.VMFields, apiclient.VirtualMachineStatusStopped
		case "reboot":
			r, err := apiclient.RebootVM(ctx, c, id)
			if err != nil {
				return err
			}
			vm, target = &r.RebootVirtualMachine.VMFields, apiclient.VirtualMachineStatusActive
		case "delete":
			if _, err := apiclient.DeleteVM(ctx, c, id, &force); err != nil {
				return err
			}
			if *wait {
				if err := waitVM(ctx, c, id, "", *timeout); err != nil {
					return err
				}
			}
			fmt.Fprintf(a.io.Stdout, "deleted %s\n", id)
			return nil
		}
	default:
		return usagef("vm create|start|stop|reboot|delete")
	}
	if *wait || *waitReady {
		if err := waitVM(ctx, c, vm.Id, target, *timeout); err != nil {
			return err
		}
		if *waitReady && target == apiclient.VirtualMachineStatusActive {
			if err := waitGuestReady(ctx, c, vm.Id, *timeout); err != nil {
				return err
			}
		}
		r, err := apiclient.GetVM(ctx, c, vm.Id)
		if err != nil {
			return err
		}
		if len(r.VirtualMachines.Edges) > 0 && r.VirtualMachines.Edges[0].Node != nil {
			vm = &r.VirtualMachines.Edges[0].Node.VMFields
		}
	}
	return a.show(vm, []string{"id", "name", "status", "guestState", "node"})
}

// waitGuestReady polls the VM until its guest says it is up (guestState READY), failing when
// the guest missed its deadline (UNREACHABLE).
func waitGuestReady(ctx context.Context, c *apiclient.Client, id string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		r, err := apiclient.GetVM(ctx, c, id)
		if err != nil {
			return err
		}
		if len(r.VirtualMachines.Edges) == 0 || r.VirtualMachines.Edges[0].Node == nil {
			return fmt.Errorf("VM %s is gone", id)
		}
		switch r.VirtualMachines.Edges[0].Node.GuestState {
		case apiclient.VirtualMachineGuestStateReady:
			return nil
		case apiclient.VirtualMachineGuestStateUnreachable:
			return fmt.Errorf("the guest of VM %s did not report ready in time (guestState UNREACHABLE)", id)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VM %s: guest not READY: %w", id, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// waitVM polls the VM until it has status target (an empty target: until it is gone),
// failing on ERROR.
func waitVM(ctx context.Context, c *apiclient.Client, id string, target apiclient.VirtualMachineStatus, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		r, err := apiclient.GetVM(ctx, c, id)
		if err != nil {
			return err
		}
		if len(r.VirtualMachines.Edges) == 0 || r.VirtualMachines.Edges[0].Node == nil {
			if target == "" {
				return nil
			}
			return fmt.Errorf("VM %s is gone", id)
		}
		vm := r.VirtualMachines.Edges[0].Node
		switch vm.Status {
		case target:
			return nil
		case apiclient.VirtualMachineStatusError:
			reason := ""
			if vm.StatusReason != nil {
				reason = *vm.StatusReason
			}
			return fmt.Errorf("VM %s is in ERROR: %s", id, reason)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("VM %s still %s after %v", id, vm.Status, timeout)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// ---------------------------------------------------------------- node

func runNode(ctx context.Context, a *app, args []string) error {
	if len(args) == 0 {
		return usagef("node cordon|uncordon|drain|reenroll NODE_ID")
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("node "+verb, flag.ContinueOnError)
	reason := fs.String("reason", "", "why (cordon)")
	timeout := fs.Int("timeout", 1800, "drain: seconds before the drain fails, naming stuck VMs")
	force := fs.Bool("force", false, "drain: the node is fenced; recreate its VMs elsewhere at once")
	expires := fs.Int("expires", 3600, "reenroll: seconds the new agent's join token lasts")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("node %s NODE (name or id)", verb)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	id, err := a.ref(ctx, c, "node", pos[0])
	if err != nil {
		return err
	}
	switch verb {
	case "cordon":
		r, err := apiclient.CordonNode(ctx, c, id, optional(*reason))
		if err != nil {
			return err
		}
		return a.show(r.CordonNode.NodeFields, []string{"id", "name", "status", "schedulable", "cordonReason"})
	case "uncordon":
		r, err := apiclient.UncordonNode(ctx, c, id)
		if err != nil {
			return err
		}
		return a.show(r.UncordonNode.NodeFields, []string{"id", "name", "status", "schedulable"})
	case "drain":
		r, err := apiclient.DrainNode(ctx, c, id, timeout, force)
		if err != nil {
			return err
		}
		if a.output != "table" {
			return a.show(r.DrainNode, nil)
		}
		d := r.DrainNode
		if err := a.show(d.Node.NodeFields, []string{"id", "name", "status", "schedulable", "drainState"}); err != nil {
			return err
		}
		fmt.Fprintf(a.io.Stdout, "moving %d VMs\n", len(d.Moving))
		for _, u := range d.Unmovable {
			fmt.Fprintf(a.io.Stdout, "cannot move %s (%s): %s\n", u.VirtualMachine.Name, u.VirtualMachine.Id, u.Reason)
		}
		if m := d.Node.DrainMessage; m != nil && *m != "" {
			fmt.Fprintf(a.io.Stdout, "drain: %s\n", *m)
		}
		return nil
	case "reenroll":
		// The old agent's tokens are revoked now; the join token is shown only here.
		r, err := apiclient.ReenrollComputeNode(ctx, c, id, expires)
		if err != nil {
			return err
		}
		if a.output != "table" {
			return a.show(r.ReenrollComputeNode, nil)
		}
		p := r.ReenrollComputeNode
		fmt.Fprintf(a.io.Stdout, "node %s: %d agent token(s) revoked\njoin token (expires %s, shown once): %s\n"+
			"start the new agent with --join-token <that token>\n", p.Node.Name, p.RevokedTokens, p.JoinToken.ExpiresAt, p.Token)
		return nil
	}
	return usagef("node cordon|uncordon|drain|reenroll NODE_ID")
}

// ---------------------------------------------------------------- watch

func runWatch(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	id := fs.String("id", "", "only this object")
	tenant := fs.String("tenant", "", "only this tenant's, by name or id (vms, regionservices)")
	count := fs.Int("count", 0, "stop after this many events (0: until interrupted)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("watch vms|nodes|regionservices")
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	tenantID, err := a.ref(ctx, c, "tenant", *tenant)
	if err != nil {
		return err
	}
	vars := map[string]any{"id": optional(*id)}
	var query, key string
	switch normalize(pos[0]) {
	case "vms", "vm", "virtualmachines":
		query, key = apiclient.WatchVMs_Operation, "virtualMachineStatusChanged"
		vars["tenantID"] = optional(tenantID)
	case "nodes", "node", "computenodes":
		query, key = apiclient.WatchNodes_Operation, "nodeStatusChanged"
	case "regionservices", "services":
		query, key = apiclient.WatchRegionServices_Operation, "regionServiceStatusChanged"
		vars["tenantID"] = optional(tenantID)
	default:
		return usagef("watch vms|nodes|regionservices")
	}
	n := 0
	errDone := errors.New("done")
	ready := func() { fmt.Fprintf(a.io.Stderr, "watching %s\n", pos[0]) }
	err = c.Subscribe(ctx, query, vars, ready, func(data json.RawMessage) error {
		var ev map[string]map[string]any
		if err := json.Unmarshal(data, &ev); err != nil {
			return err
		}
		row := ev[key]
		row["time"] = time.Now().UTC().Format(time.RFC3339)
		cols := []string{"time", "id", "name", "status", "statusReason"}
		if _, ok := row["guestState"]; ok {
			cols = []string{"time", "id", "name", "status", "guestState", "statusReason"}
		}
		if a.output == "table" {
			cells := make([]string, len(cols))
			for i, col := range cols {
				cells[i] = cell(row[col])
			}
			fmt.Fprintln(a.io.Stdout, strings.Join(cells, "  "))
		} else if err := a.show(row, cols); err != nil {
			return err
		}
		n++
		if *count > 0 && n >= *count {
			return errDone
		}
		return nil
	})
	if errors.Is(err, errDone) {
		return nil
	}
	return err
}

// resolveVMInput turns the names in a create's flags into ids (ids stay as they are).
func (a *app) resolveVMInput(ctx context.Context, c *apiclient.Client, in *apiclient.CreateVirtualMachineInput, image, zone string, networks, keys []string) error {
	var err error
	for _, r := range []struct {
		typ string
		dst *string
	}{{"tenant", &in.TenantID}, {"region", &in.RegionID}, {"flavor", &in.FlavorID}} {
		if *r.dst, err = a.ref(ctx, c, r.typ, *r.dst); err != nil {
			return err
		}
	}
	if in.ImageID, err = a.optRef(ctx, c, "image", optional(image)); err != nil {
		return err
	}
	if in.AvailabilityZoneID, err = a.optRef(ctx, c, "availabilityzone", optional(zone)); err != nil {
		return err
	}
	if in.NetworkIDs, err = a.refs(ctx, c, "network", networks); err != nil {
		return err
	}
	in.SshKeyIDs, err = a.refs(ctx, c, "sshkey", keys)
	return err
}
