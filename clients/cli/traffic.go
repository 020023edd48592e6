package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/virtflow/virtflow/clients/apiclient"
)

// runLB reads load balancers and sets their listeners (issue 27).
//
//	lb list [--first N]
//	lb show LB_ID
//	lb listeners set LB_ID [--listener PORT[/PROTO]:TARGET ...] [--clear] [--interval-ms N]
func runLB(ctx context.Context, a *app, args []string) error {
	const usage = "lb list [--first N] | lb show LB_ID | lb listeners set LB_ID [--listener PORT[/TCP|HTTP]:TARGET_PORT ...] [--clear] [--interval-ms N]"
	if len(args) == 0 {
		return usagef(usage)
	}
	verb, args := args[0], args[1:]
	if verb == "listeners" {
		if len(args) == 0 || args[0] != "set" {
			return usagef(usage)
		}
		return runLBListenersSet(ctx, a, args[1:])
	}
	fs := flag.NewFlagSet("lb "+verb, flag.ContinueOnError)
	first := fs.Int("first", 500, "list: at most this many load balancers")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if (verb != "list" || len(pos) != 0) && (verb != "show" || len(pos) != 1) {
		return usagef(usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	switch verb {
	case "list":
		r, err := apiclient.LoadBalancers(ctx, c, first)
		if err != nil {
			return err
		}
		if a.output != "table" {
			out := make([]apiclient.LoadBalancerFields, 0, len(r.LoadBalancers.Edges))
			for _, e := range r.LoadBalancers.Edges {
				if e != nil && e.Node != nil {
					out = append(out, e.Node.LoadBalancerFields)
				}
			}
			return a.show(out, nil)
		}
		rows := []map[string]any{}
		for _, e := range r.LoadBalancers.Edges {
			if e != nil && e.Node != nil {
				rows = append(rows, lbRow(&e.Node.LoadBalancerFields))
			}
		}
		return a.show(rows, []string{"id", "name", "status", "vip", "listeners", "membersUp", "nodesAnnouncing", "reason"})
	case "show":
		lb, err := getLB(ctx, c, pos[0])
		if err != nil {
			return err
		}
		return a.showLB(lb)
	default:
		return usagef(usage)
	}
}

// runLBListenersSet replaces a load balancer's listeners (updateLoadBalancer) and, with
// --interval-ms, its health-check interval.
func runLBListenersSet(ctx context.Context, a *app, args []string) error {
	fs := flag.NewFlagSet("lb listeners set", flag.ContinueOnError)
	var specs stringList
	fs.Var(&specs, "listener", "PORT[/TCP|HTTP]:TARGET_PORT, repeatable (e.g. 80:8080, 443/HTTP:8443)")
	clear := fs.Bool("clear", false, "remove every listener")
	interval := fs.Int("interval-ms", 0, "health-check interval in milliseconds (0: unchanged)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (len(specs) == 0 && !*clear && *interval == 0) || (len(specs) > 0 && *clear) {
		return usagef("lb listeners set LB_ID (--listener PORT[/TCP|HTTP]:TARGET_PORT ... | --clear) [--interval-ms N]")
	}
	in := apiclient.UpdateLoadBalancerInput{}
	for _, s := range specs {
		l, err := parseListener(s)
		if err != nil {
			return err
		}
		in.Listeners = append(in.Listeners, l)
	}
	if *clear {
		in.ClearListeners = clear
	}
	if *interval != 0 {
		in.HealthCheckIntervalMs = interval
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	r, err := apiclient.UpdateLoadBalancer(ctx, c, pos[0], in)
	if err != nil {
		return err
	}
	return a.showLB(&r.UpdateLoadBalancer.LoadBalancerFields)
}

// parseListener reads PORT[/PROTO]:TARGET_PORT (PROTO TCP by default, case-insensitive).
func parseListener(s string) (apiclient.LoadBalancerListenerInput, error) {
	front, target, ok := strings.Cut(s, ":")
	if !ok {
		return apiclient.LoadBalancerListenerInput{}, usagef("--listener %q: want PORT[/TCP|HTTP]:TARGET_PORT", s)
	}
	port, proto, _ := strings.Cut(front, "/")
	if proto == "" {
		proto = "TCP"
	}
	p, err1 := strconv.Atoi(port)
	t, err2 := strconv.Atoi(target)
	if err1 != nil || err2 != nil {
		return apiclient.LoadBalancerListenerInput{}, usagef("--listener %q: ports are numbers", s)
	}
	return apiclient.LoadBalancerListenerInput{Port: p, Protocol: strings.ToUpper(proto), TargetPort: t}, nil
}

func getLB(ctx context.Context, c *apiclient.Client, id string) (*apiclient.LoadBalancerFields, error) {
	r, err := apiclient.GetLoadBalancer(ctx, c, id)
	if err != nil {
		return nil, err
	}
	if r.Node != nil {
		if lb, ok := (*r.Node).(*apiclient.GetLoadBalancerNodeLoadBalancer); ok {
			return &lb.LoadBalancerFields, nil
		}
	}
	return nil, fmt.Errorf("no load balancer %s you may see", id)
}

func listenersText(ls []apiclient.LoadBalancerFieldsListenersLoadBalancerListener) string {
	parts := make([]string, 0, len(ls))
	for _, l := range ls {
		parts = append(parts, fmt.Sprintf("%d/%s:%d", l.Port, l.Protocol, l.TargetPort))
	}
	return strings.Join(parts, ",")
}

func lbRow(lb *apiclient.LoadBalancerFields) map[string]any {
	up, announcing := 0, 0
	for _, m := range lb.Members {
		if m.Health == "UP" {
			up++
		}
	}
	for _, n := range lb.NodeStates {
		if n.Announced {
			announcing++
		}
	}
	row := map[string]any{"id": lb.Id, "name": lb.Name, "status": string(lb.Status), "listeners": listenersText(lb.Listeners),
		"membersUp": fmt.Sprintf("%d/%d", up, len(lb.Members)), "nodesAnnouncing": fmt.Sprintf("%d/%d", announcing, len(lb.NodeStates)),
		"intervalMs": lb.HealthCheckIntervalMs}
	if lb.Vip != nil {
		row["vip"] = lb.Vip.Address
	}
	if lb.StatusReason != nil {
		row["reason"] = *lb.StatusReason
	}
	return row
}

// showLB writes one load balancer: as JSON/YAML whole; as tables its summary, its members
// and its serving nodes.
func (a *app) showLB(lb *apiclient.LoadBalancerFields) error {
	if a.output != "table" {
		return a.show(lb, nil)
	}
	if err := a.show(lbRow(lb), []string{"id", "name", "status", "vip", "listeners", "intervalMs", "reason"}); err != nil {
		return err
	}
	fmt.Fprintln(a.io.Stdout)
	members := []map[string]any{}
	for _, m := range lb.Members {
		members = append(members, map[string]any{"member": m.Address, "vmID": m.VmID, "health": m.Health, "lastCheck": deref(m.LastCheck), "reason": deref(m.Reason)})
	}
	if err := a.show(members, []string{"member", "vmID", "health", "lastCheck", "reason"}); err != nil {
		return err
	}
	fmt.Fprintln(a.io.Stdout)
	nodes := []map[string]any{}
	for _, n := range lb.NodeStates {
		nodes = append(nodes, map[string]any{"node": n.NodeName, "announced": n.Announced, "forwarding": n.Forwarding, "reportedAt": deref(n.ReportedAt), "reason": deref(n.Reason)})
	}
	return a.show(nodes, []string{"node", "announced", "forwarding", "reportedAt", "reason"})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// runGlobalServices reads global services and attaches or detaches region services (region
// closure: a detached region's VIP leaves the GSLB answer on the traffic loop's next pass).
//
//	global-services list [--first N]
//	global-services show GS_ID
//	global-services attach|detach GS_ID REGION_SERVICE_ID...
func runGlobalServices(ctx context.Context, a *app, args []string) error {
	const usage = "global-services list [--first N] | show GS_ID | attach|detach GS_ID REGION_SERVICE_ID..."
	if len(args) == 0 {
		return usagef(usage)
	}
	verb, args := args[0], args[1:]
	fs := flag.NewFlagSet("global-services "+verb, flag.ContinueOnError)
	first := fs.Int("first", 500, "list: at most this many global services")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case verb == "list" && len(pos) == 0, verb == "show" && len(pos) == 1, (verb == "attach" || verb == "detach") && len(pos) >= 2:
	default:
		return usagef(usage)
	}
	c, err := a.api()
	if err != nil {
		return err
	}
	switch verb {
	case "list":
		r, err := apiclient.GlobalServices(ctx, c, first)
		if err != nil {
			return err
		}
		all := []*apiclient.GlobalServicesGlobalServicesGlobalServiceConnectionEdgesGlobalServiceEdgeNodeGlobalService{}
		for _, e := range r.GlobalServices.Edges {
			if e != nil && e.Node != nil {
				all = append(all, e.Node)
			}
		}
		if a.output != "table" {
			return a.show(all, nil)
		}
		rows := []map[string]any{}
		for _, g := range all {
			row := map[string]any{"id": g.Id, "name": g.Name, "status": string(g.Status), "mode": string(g.Mode), "ttl": g.Ttl,
				"answer": strings.Join(g.DnsAnswer, ","), "regionServices": g.RegionServices.TotalCount, "fqdn": deref(g.Fqdn), "reason": deref(g.StatusReason)}
			rows = append(rows, row)
		}
		return a.show(rows, []string{"id", "name", "status", "mode", "fqdn", "ttl", "answer", "regionServices", "reason"})
	case "show":
		r, err := apiclient.GetGlobalService(ctx, c, pos[0])
		if err != nil {
			return err
		}
		if r.Node != nil {
			if g, ok := (*r.Node).(*apiclient.GetGlobalServiceNodeGlobalService); ok {
				return a.showGS(&g.GlobalServiceFields)
			}
		}
		return fmt.Errorf("no global service %s you may see", pos[0])
	case "attach", "detach":
		in := apiclient.UpdateGlobalServiceInput{}
		if verb == "attach" {
			in.AddRegionServiceIDs = pos[1:]
		} else {
			in.RemoveRegionServiceIDs = pos[1:]
		}
		r, err := apiclient.UpdateGlobalService(ctx, c, pos[0], in)
		if err != nil {
			return err
		}
		return a.showGS(&r.UpdateGlobalService.GlobalServiceFields)
	default:
		return usagef(usage)
	}
}

func gsRow(g *apiclient.GlobalServiceFields) map[string]any {
	row := map[string]any{"id": g.Id, "name": g.Name, "status": string(g.Status), "mode": string(g.Mode), "ttl": g.Ttl,
		"answer": strings.Join(g.DnsAnswer, ","), "regionServices": len(g.RegionServices.Edges)}
	if g.Fqdn != nil {
		row["fqdn"] = *g.Fqdn
	}
	if g.StatusReason != nil {
		row["reason"] = *g.StatusReason
	}
	return row
}

// showGS writes one global service: as JSON/YAML whole; as tables its summary and its member
// region services with their region, VIP and load-balancer status.
func (a *app) showGS(g *apiclient.GlobalServiceFields) error {
	if a.output != "table" {
		return a.show(g, nil)
	}
	if err := a.show(gsRow(g), []string{"id", "name", "status", "mode", "fqdn", "ttl", "answer", "reason"}); err != nil {
		return err
	}
	fmt.Fprintln(a.io.Stdout)
	rows := []map[string]any{}
	for _, e := range g.RegionServices.Edges {
		if e == nil || e.Node == nil {
			continue
		}
		s := e.Node
		row := map[string]any{"regionService": s.Id, "name": s.Name, "region": s.Region.Name}
		if s.LoadBalancer != nil {
			row["lbStatus"] = string(s.LoadBalancer.Status)
			if s.LoadBalancer.Vip != nil {
				row["vip"] = s.LoadBalancer.Vip.Address
			}
		}
		rows = append(rows, row)
	}
	return a.show(rows, []string{"regionService", "name", "region", "vip", "lbStatus"})
}
