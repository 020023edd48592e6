package notices_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/notices"
	"github.com/virtflow/virtflow/internal/platform/infra"
	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestListActiveOnly: activeNotices lists a notice only between its start (publishedAt)
// and its end (expiresAt); the scheduled and the expired ones stay in the history.
func TestListActiveOnly(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "test")
	db, err := infra.OpenDatabase(ctx, testdb.New(t), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	c := db.Client
	now := time.Now().Truncate(time.Second)
	mk := func(title string, start time.Time, end *time.Time) {
		c.Notice.Create().SetTitle(title).SetPublishedAt(start).SetNillableExpiresAt(end).ExecX(ctx)
	}
	hour := time.Hour
	past, soon := now.Add(-hour), now.Add(hour)
	mk("current", now.Add(-2*hour), &soon)
	mk("no end", past, nil)
	mk("scheduled", soon, nil)
	mk("expired", now.Add(-3*hour), &past)
	got, err := notices.List(ctx, c, now)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, n := range got {
		titles = append(titles, n.Title)
	}
	if !slices.Equal(titles, []string{"no end", "current"}) {
		t.Errorf("active notices %v, want [no end current] (newest first)", titles)
	}
	if n := c.Notice.Query().CountX(ctx); n != 4 {
		t.Errorf("%d notices in the history, want 4", n)
	}
	// At the end instant a notice is over; at its start it is shown.
	got, _ = notices.List(ctx, c, soon)
	titles = titles[:0]
	for _, n := range got {
		titles = append(titles, n.Title)
	}
	if !slices.Equal(titles, []string{"scheduled", "no end"}) {
		t.Errorf("at the current notice's end: %v, want [scheduled no end]", titles)
	}
}
