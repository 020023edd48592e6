package graph

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/virtflow/virtflow/authz"
	"github.com/virtflow/virtflow/domain/apierr"
	"github.com/virtflow/virtflow/ent"
	"github.com/virtflow/virtflow/ent/region"
	"github.com/virtflow/virtflow/internal/platform/infra"
)

// TestTransactionerCommitRefusal: a commit hook that refuses with a coded error (placement
// charging a quota just before COMMIT) rolls the mutation back and is answered with its
// code, not as INTERNAL; any other commit failure stays INTERNAL.
func TestTransactionerCommitRefusal(t *testing.T) {
	ctx := authz.SystemContext(context.Background(), "tx-test")
	db, err := infra.OpenDatabase(ctx, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	tr := transactioner{client: db.Client, opts: Options{Logger: slog.New(slog.DiscardHandler),
		RequestID: func(context.Context) string { return "req-1" }}}
	ctx = graphql.WithOperationContext(ctx, &graphql.OperationContext{
		Operation: &ast.OperationDefinition{Operation: ast.Mutation}})
	for name, tc := range map[string]struct {
		refuse error
		code   apierr.Code
	}{
		"coded":   {&apierr.Error{Code: apierr.CodeQuotaExceeded, Message: "the last quota was taken"}, apierr.CodeQuotaExceeded},
		"uncoded": {errors.New("disk on fire"), apierr.CodeInternal},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := tr.InterceptResponse(ctx, func(ctx context.Context) *graphql.Response {
				tx := ent.TxFromContext(ctx)
				tx.Client().Region.Create().SetName("tx-test-" + name).SaveX(ctx)
				tx.OnCommit(func(ent.Committer) ent.Committer {
					return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
						_ = tx.Rollback()
						return tc.refuse
					})
				})
				return &graphql.Response{Data: []byte(`{"ok":true}`)}
			})
			if len(rsp.Errors) != 1 || rsp.Data != nil {
				t.Fatalf("response %+v; want one error and no data", rsp)
			}
			if got := rsp.Errors[0].Extensions["code"]; got != string(tc.code) {
				t.Errorf("code %v (%s); want %s", got, rsp.Errors[0].Message, tc.code)
			}
			if n := db.Client.Region.Query().Where(region.Name("tx-test-" + name)).CountX(ctx); n != 0 {
				t.Errorf("%d regions written by the refused mutation", n)
			}
		})
	}
}
