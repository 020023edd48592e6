package graph_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/virtflow/virtflow/internal/testkit/gqltest"
)

// udAliasBomb is a "billion laughs" cloud-config whose last list expands to 9^levels strings.
func udAliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("#cloud-config\na0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n")
	for i := 1; i < levels; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, strings.Repeat(p+",", 8)+p)
	}
	return b.String()
}

// udDeep is a 64 KiB cloud-config of nested flow sequences.
func udDeep() string {
	n := (64<<10 - len("#cloud-config\nx: \n")) / 2
	return "#cloud-config\nx: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
}

// TestCreateVMRefusesHostileUserData (issue 23, item 3): alias bombs of 9^6 and 9^9
// leaves and a 64 KiB deeply nested document are refused by createVirtualMachine through
// the real GraphQL stack on PostgreSQL with VALIDATION on userData, and no VM is written.
// The time and bytes allocated by each refused request are logged (go test -v); a
// legitimate cloud-config with anchors is accepted.
func TestCreateVMRefusesHostileUserData(t *testing.T) {
	env, _ := newEnv(t)
	s := newPVSite(t, env)
	create := func(name, userData string) gqltest.Response {
		return env.Do(t, `mutation($in: CreateVirtualMachineInput!) { createVirtualMachine(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"name": name, "tenantID": gqltest.ID(s.Tenant), "regionID": gqltest.ID(s.Region),
				"flavorID": gqltest.ID(s.flavor), "userData": userData}})
	}
	for _, tc := range []struct{ name, userData string }{
		{"alias bomb 9^6", udAliasBomb(6)},
		{"alias bomb 9^9", udAliasBomb(9)},
		{"deep 64 KiB", udDeep()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := uniq("ud")
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := create(name, tc.userData)
			took := time.Since(start)
			runtime.ReadMemStats(&after)
			r.ExpectError(t, "VALIDATION", "userData")
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s (%d bytes): refused in %v, %.1f MB allocated by the request", tc.name, len(tc.userData), took, float64(alloc)/(1<<20))
			// The old code allocated 1.7 GB for the deep document before refusing it and
			// accepted the bombs; a request now allocates a few MB at most.
			if alloc > 64<<20 {
				t.Errorf("refusing allocated %d MB", alloc>>20)
			}
			var out struct{ VirtualMachines struct{ TotalCount int } }
			env.MustDo(t, `query($n: String!) { virtualMachines(where: {name: $n}) { totalCount } }`, map[string]any{"n": name}, &out)
			if out.VirtualMachines.TotalCount != 0 {
				t.Errorf("a refused create left %d VMs", out.VirtualMachines.TotalCount)
			}
		})
	}
	ok := "#cloud-config\nbase: &base {shell: /bin/sh}\nusers: [default, {<<: *base, name: alice}]\npackages: &p [nginx]\nx: *p\n"
	if r := create(uniq("ud"), ok); len(r.Errors) > 0 {
		t.Errorf("a cloud-config with anchors was refused: %s", r.ErrorsString())
	}
}
