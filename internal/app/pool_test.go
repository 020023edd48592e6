package app_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq" // database/sql driver "postgres"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/internal/testkit/poll"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// readyzPools reads /readyz: its status code and the database pool's report.
func readyzPools(t *testing.T, r *running) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(r.url("/readyz"))
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Pools map[string]map[string]any
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("/readyz: %v: %s", err, raw)
	}
	return resp.StatusCode, body.Pools["database"]
}

// TestRunServerPoolSizeAndSaturation: VIRTFLOW_DB_MAX_CONNS bounds the server's PostgreSQL
// connections (counted by PostgreSQL itself under load), /readyz reports the pool, and when
// every connection waits on a lock the pool reads saturated and the server not ready; once
// the lock goes, it is ready again.
func TestRunServerPoolSizeAndSaturation(t *testing.T) {
	ctx, cancel := context.WithTimeout(authz.SystemContext(context.Background(), "test"), 2*time.Minute)
	defer cancel()
	dsn, drop, err := testdb.Create(ctx)
	if err != nil {
		testdb.Unavailable(t, err)
	}
	t.Cleanup(drop)
	vars := map[string]string{"DATABASE_URL": dsn, "REDIS_URL": testdb.RedisURL(), "VIRTFLOW_DB_MAX_CONNS": "3"}
	srv := start(t, loadConfig(t, []string{"--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, vars))
	defer srv.stop(t)

	code, pool := readyzPools(t, srv)
	if code != http.StatusOK || pool["maxOpen"] != float64(3) || pool["saturated"] != false {
		t.Fatalf("/readyz = %d, pool %v; want 200 with maxOpen 3, not saturated", code, pool)
	}

	admin, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var dbName string
	if err := admin.QueryRowContext(ctx, "SELECT current_database()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	serverConns := func() int {
		var n int
		err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = $1 AND pid <> pg_backend_pid()`, dbName).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	// 20 concurrent queries: never more than 3 connections.
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { srv.regionNames(t) })
	}
	wg.Wait()
	if n := serverConns(); n > 3 {
		t.Errorf("the server holds %d connections; want at most 3", n)
	}

	// Hold a lock every region read waits on: three reads take the whole pool.
	tx, err := admin.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "LOCK TABLE regions IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var blocked sync.WaitGroup
	for range 3 {
		blocked.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, srv.url("/query"),
				strings.NewReader(`{"query":"{ regions { totalCount } }"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+testAdminToken)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	poll.Until(t, 20*time.Second, func() error {
		code, pool := readyzPools(t, srv)
		if code != http.StatusServiceUnavailable || pool["saturated"] != true {
			return fmt.Errorf("/readyz = %d, pool %v; want 503 and saturated", code, pool)
		}
		return nil
	})
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	blocked.Wait()
	poll.Until(t, 20*time.Second, func() error {
		code, pool := readyzPools(t, srv)
		if code != http.StatusOK || pool["saturated"] != false || pool["waitCount"].(float64) == 0 {
			return fmt.Errorf("/readyz = %d, pool %v; want 200, not saturated, waits counted", code, pool)
		}
		return nil
	})
}
