package dbtx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
	"github.com/virtflow/virtflow/store/dbtx"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func open(t *testing.T) (context.Context, *ent.Client) {
	t.Helper()
	ctx := authz.SystemContext(context.Background(), "dbtx-test")
	db, err := infra.OpenDatabase(ctx, testdb.DSN(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return ctx, db.Client
}

// name is a region name unique to this test run.
func name(s string) string {
	return fmt.Sprintf("dbtx-%s-%d", s, time.Now().UnixNano())
}

func exists(t *testing.T, ctx context.Context, c *ent.Client, n string) bool {
	t.Helper()
	ok, err := c.Region.Query().Where(region.Name(n)).Exist(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestRunOwnTransactionCommitsOrRollsBack(t *testing.T) {
	ctx, c := open(t)
	kept, dropped := name("kept"), name("dropped")
	own, err := dbtx.Run(ctx, c, func(tc *ent.Client) error { return tc.Region.Create().SetName(kept).Exec(ctx) })
	if err != nil || !own {
		t.Fatalf("Run = %v, %v; want own transaction, nil", own, err)
	}
	boom := errors.New("boom")
	_, err = dbtx.Run(ctx, c, func(tc *ent.Client) error {
		if err := tc.Region.Create().SetName(dropped).Exec(ctx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the error of fn", err)
	}
	func() {
		defer func() { _ = recover() }()
		_, _ = dbtx.Run(ctx, c, func(tc *ent.Client) error {
			_ = tc.Region.Create().SetName(dropped + "-panic").Exec(ctx)
			panic("boom")
		})
	}()
	if !exists(t, ctx, c, kept) || exists(t, ctx, c, dropped) || exists(t, ctx, c, dropped+"-panic") {
		t.Fatal("want the committed region only")
	}
}

func TestRunJoinsTheCallersTransaction(t *testing.T) {
	ctx, c := open(t)
	for _, via := range []string{"client", "context"} {
		t.Run(via, func(t *testing.T) {
			n := name(via)
			tx, err := c.Tx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			client, inner := c, ent.NewTxContext(ctx, tx)
			if via == "client" {
				client, inner = tx.Client(), ctx
			}
			own, err := dbtx.Run(inner, client, func(tc *ent.Client) error { return tc.Region.Create().SetName(n).Exec(ctx) })
			if err != nil || own {
				t.Fatalf("Run = %v, %v; want the caller's transaction, nil", own, err)
			}
			if exists(t, ctx, c, n) {
				t.Fatal("the write is visible before the caller commits")
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if exists(t, ctx, c, n) {
				t.Fatal("the caller rolled back, but the write stayed")
			}
		})
	}
}
