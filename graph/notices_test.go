package graph_test

import (
	"testing"
	"time"

	"github.com/virtflow/virtflow/authz"
)

// TestActiveNotices: activeNotices, through the HTTP handler, shows a notice only between
// its publishedAt and its expiresAt; notices still lists all of them.
func TestActiveNotices(t *testing.T) {
	t.Parallel()
	env, _ := newEnv(t)
	ctx := authz.SystemContext(t.Context(), "test")
	now := time.Now()
	past, soon := now.Add(-time.Hour), now.Add(time.Hour)
	env.Client.Notice.Create().SetTitle("tn-current").SetPublishedAt(past).SetExpiresAt(soon).ExecX(ctx)
	env.Client.Notice.Create().SetTitle("tn-scheduled").SetPublishedAt(soon).ExecX(ctx)
	env.Client.Notice.Create().SetTitle("tn-expired").SetPublishedAt(now.Add(-2 * time.Hour)).SetExpiresAt(past).ExecX(ctx)
	var out struct {
		ActiveNotices []struct{ Title string }
		Notices       struct{ TotalCount int }
	}
	env.MustDo(t, `{ activeNotices { title } notices(where: {titleHasPrefix: "tn-"}) { totalCount } }`, nil, &out)
	var titles []string
	for _, n := range out.ActiveNotices {
		if len(n.Title) > 3 && n.Title[:3] == "tn-" {
			titles = append(titles, n.Title)
		}
	}
	if len(titles) != 1 || titles[0] != "tn-current" {
		t.Errorf("activeNotices %v, want [tn-current]", titles)
	}
	if out.Notices.TotalCount != 3 {
		t.Errorf("notices totalCount %d, want 3 (the history)", out.Notices.TotalCount)
	}
}
