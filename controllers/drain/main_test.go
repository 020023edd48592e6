package drain_test

import (
	"testing"

	"github.com/virtflow/virtflow/internal/testkit/testdb"
)

// TestMain gives the package its own PostgreSQL database.
func TestMain(m *testing.M) { testdb.Main(m) }
