package kubecluster

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/virtflow/virtflow/domain/placement/placementtest"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/kubernetescluster"
)

// drive runs cluster id's workflow to the end of its bootstrap (phase READY) by calling Step
// directly (no queue) and makes its guests report, as the simulated guests do: what is left
// is the control plane's own work: API, scheduling and placement, VIP, PKI and rendering.
func drive(s *Service, c *ent.Client, id int) error {
	for range 10 {
		if err := s.Step(context.Background(), id); err != nil {
			return err
		}
		k, err := c.KubernetesCluster.Get(placementtest.Ctx(), id)
		if err != nil {
			return err
		}
		if k.Phase == kubernetescluster.PhaseReady {
			if _, err := reportAllErr(c, k); err != nil {
				return err
			}
			if k, _ = c.KubernetesCluster.Get(placementtest.Ctx(), id); k.Status != kubernetescluster.StatusActive {
				return fmt.Errorf("cluster %s: %s (%s)", k.Name, k.Status, k.StatusReason)
			}
			return nil
		}
	}
	return fmt.Errorf("cluster %d never bootstrapped", id)
}

// BenchmarkClusterOverhead measures the control plane's own work per 3 + 3 cluster, create
// to ACTIVE with guests that answer at once: the API's create, the placement of 6 VMs
// (quota and capacity checked by PostgreSQL), the VIP, the PKI and the 6 cloud-configs.
func BenchmarkClusterOverhead(b *testing.B) {
	e := newEnvSized(b, 16, 128) // room for about 500 clusters
	s := e.service(nil)
	start := time.Now()
	n := 0
	for b.Loop() {
		k := e.create(b, s, fmt.Sprintf("bench-%d", n), 3, 3, false)
		if err := drive(s, e.c, k.ID); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(n), "ms/cluster")
}

// BenchmarkHundredClustersInFlight creates 100 clusters of 3 + 3 at once and runs their
// workflows concurrently (8 workers' worth of goroutines), and reports how long all took to
// become ACTIVE (s/100clusters). It fails unless every cluster got there. A benchmark, not
// a test, to keep CI fast: go test ./controllers/kubecluster -run '^$' -bench Hundred -benchtime 1x.
func BenchmarkHundredClustersInFlight(b *testing.B) {
	for b.Loop() {
		hundred(b)
	}
}

func hundred(t *testing.B) {
	e := newEnvSized(t, 10, 64)
	s := e.service(nil)
	const n = 100
	ids := make([]int, n)
	start := time.Now()
	for i := range n {
		ids[i] = e.create(t, s, fmt.Sprintf("fleet-%d", i), 3, 3, false).ID
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				if err := drive(s, e.c, id); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	active := e.c.KubernetesCluster.Query().Where(kubernetescluster.StatusEQ(kubernetescluster.StatusActive),
		kubernetescluster.NameHasPrefix("fleet-")).CountX(placementtest.Ctx())
	if active != n {
		t.Fatalf("%d of %d clusters ACTIVE", active, n)
	}
	t.ReportMetric(took.Seconds(), "s/100clusters")
	t.Logf("%d clusters of 3 + 3 in flight: all ACTIVE in %v (%v per cluster of wall time, 8 concurrent workers)", n, took, took/n)
}
