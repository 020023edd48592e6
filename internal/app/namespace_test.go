package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestTwoDeploymentsOnOneRedis: two deployments on databases 1 and 2 of one Redis server
// (each with its own PostgreSQL database) use channels of their own — Redis shares pub/sub
// channels between its databases — so one's changes never reach the other's caches. A third
// with an explicit namespace on database 2 is apart from both.
func TestTwoDeploymentsOnOneRedis(t *testing.T) {
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 2*time.Minute)
	defer cancel()
	base := strings.TrimSuffix(testdb.PrivateRedis(t), "/0")
	deploy := func(db, ns string) *running {
		dsn, drop, err := testdb.Create(ctx)
		if err != nil {
			testdb.Unavailable(t, err)
		}
		t.Cleanup(drop)
		vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": base + "/" + db, "VIRTFLOW_REDIS_NAMESPACE": ns}
		srv := start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, vars))
		t.Cleanup(func() { srv.stop(t) })
		return srv
	}
	a, b, c := deploy("1", ""), deploy("2", ""), deploy("2", "blue")

	opts, err := redis.ParseURL(base + "/0")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	channels, err := rdb.PubSubChannels(ctx, "virtflow:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(channels)
	want := []string{"virtflow:blue:live", "virtflow:blue:placement", "virtflow:db1:live", "virtflow:db1:placement",
		"virtflow:db2:live", "virtflow:db2:placement"}
	if !slices.Equal(channels, want) {
		t.Errorf("channels subscribed %v; want %v", channels, want)
	}

	// Placement events: a region made in b is heard on b's channel and not on a's or c's.
	sub := rdb.Subscribe(ctx, "virtflow:db1:placement", "virtflow:db2:placement", "virtflow:blue:placement")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	for range 2 {
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	msgs := sub.Channel()
	next := func() string {
		select {
		case m := <-msgs:
			return m.Channel
		case <-ctx.Done():
			t.Fatal("no placement event")
			return ""
		}
	}
	for i, srv := range []*running{b, a, c} {
		var out struct{ CreateRegion struct{ Name string } }
		srv.mustQuery(t, createRegion, map[string]any{"name": fmt.Sprintf("ns-%d", i)}, &out)
		wantCh := []string{"virtflow:db2:placement", "virtflow:db1:placement", "virtflow:blue:placement"}[i]
		// Events are delivered in publish order: had this change reached another
		// deployment's channel, a later step would hear it before its own.
		if got := next(); got != wantCh {
			t.Fatalf("change %d heard on %s first; want %s", i, got, wantCh)
		}
	}
}
