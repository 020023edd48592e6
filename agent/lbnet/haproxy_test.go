package lbnet_test

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/agent/lbnet"
)

// TestRender checks the configuration of two load balancers: one frontend and backend per
// listener on the VIP, every member checked at the load balancer's interval with one failed
// check taking it out, HTTP checks for an HTTP listener, and an order-independent output.
func TestRender(t *testing.T) {
	a := lbnet.Spec{ID: 7, VIP: netip.MustParseAddr("10.250.0.10"), CheckInterval: 500 * time.Millisecond, Algorithm: "LEAST_CONNECTIONS",
		Listeners: []lbnet.Listener{{Port: 443, Protocol: lbnet.TCP, TargetPort: 8443}, {Port: 80, Protocol: lbnet.HTTP, TargetPort: 8080}},
		Members:   []lbnet.Member{{ID: 12, Address: netip.MustParseAddr("172.16.0.12")}, {ID: 11, Address: netip.MustParseAddr("172.16.0.11")}}}
	b := lbnet.Spec{ID: 3, VIP: netip.MustParseAddr("10.250.0.11"), Listeners: []lbnet.Listener{{Port: 5432, Protocol: lbnet.TCP, TargetPort: 5432}}}
	got := lbnet.Render([]lbnet.Spec{a, b}, "/run/vf/stats.sock")
	if got != lbnet.Render([]lbnet.Spec{b, a}, "/run/vf/stats.sock") {
		t.Error("the configuration depends on the order of the load balancers")
	}
	for _, want := range []string{
		"stats socket /run/vf/stats.sock",
		"frontend lb7_80\n\tmode http\n\tbind 10.250.0.10:80\n",
		"backend lb7_80\n\tmode http\n\tbalance leastconn\n\toption httpchk GET /\n",
		"frontend lb7_443\n\tmode tcp\n\tbind 10.250.0.10:443\n",
		"\tserver m11 172.16.0.11:8443 check inter 500ms fastinter 500ms downinter 500ms fall 1 rise 1\n",
		"backend lb3_5432\n\tmode tcp\n\tbalance roundrobin\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("configuration lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "server m11 172.16.0.11:8443") > strings.Index(got, "server m12 172.16.0.12:8443") {
		t.Error("members not in id order")
	}
}

func TestSpecValidate(t *testing.T) {
	ok := lbnet.Spec{ID: 1, VIP: netip.MustParseAddr("10.0.0.1"), Listeners: []lbnet.Listener{{Port: 80, Protocol: lbnet.TCP, TargetPort: 80}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]lbnet.Spec{
		"no vip":       {ID: 1, Listeners: ok.Listeners},
		"port 0":       {ID: 1, VIP: ok.VIP, Listeners: []lbnet.Listener{{Port: 0, Protocol: lbnet.TCP, TargetPort: 80}}},
		"target 70000": {ID: 1, VIP: ok.VIP, Listeners: []lbnet.Listener{{Port: 80, Protocol: lbnet.TCP, TargetPort: 70000}}},
		"protocol UDP": {ID: 1, VIP: ok.VIP, Listeners: []lbnet.Listener{{Port: 80, Protocol: "UDP", TargetPort: 80}}},
		"same port":    {ID: 1, VIP: ok.VIP, Listeners: []lbnet.Listener{ok.Listeners[0], ok.Listeners[0]}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
