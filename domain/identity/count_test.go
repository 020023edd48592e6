package identity

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"github.com/virtflow/virtflow/ent"
)

// queryLog records the SQL statements a client runs.
type queryLog struct {
	mu  sync.Mutex
	sql []string
}

func (l *queryLog) add(_ context.Context, args ...any) {
	s := fmt.Sprint(args...)
	// DebugDriver writes "driver.Query: query=SELECT ... args=[...]".
	if i := strings.Index(s, "query="); i >= 0 {
		s = s[i+len("query="):]
	}
	if i := strings.Index(s, " args="); i >= 0 {
		s = s[:i]
	}
	l.mu.Lock()
	l.sql = append(l.sql, s)
	l.mu.Unlock()
}

func (l *queryLog) reset() {
	l.mu.Lock()
	l.sql = nil
	l.mu.Unlock()
}

func (l *queryLog) statements() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.sql...)
}

func (l *queryLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.sql)
}

// countingClient is a client over the test database that logs every statement it runs.
func countingClient() (*ent.Client, *queryLog) {
	l := &queryLog{}
	drv := dialect.DebugWithContext(entsql.OpenDB(dialect.Postgres, testDB.DB), l.add)
	return ent.NewClient(ent.Driver(drv)), l
}
