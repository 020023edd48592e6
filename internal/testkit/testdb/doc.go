// Package testdb gives Go test packages their own PostgreSQL database and
// tells them where the test Redis is.
//
// Every test package that needs PostgreSQL gets a fresh database with a
// random name (prefix "vf_test_"), created when the test binary starts and
// dropped when it ends, so packages can run in parallel (go test -p N)
// against one server without seeing each other's rows:
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		db, err := sql.Open("postgres", testdb.DSN(t))
//		...
//	}
//
// A package that wants to prepare the database once (run migrations, seed
// data) before its tests uses MainFunc, whose callback gets the DSN and
// returns m.Run()'s exit code:
//
//	func TestMain(m *testing.M) {
//		testdb.MainFunc(m, func(dsn string) int {
//			client := openAndMigrate(dsn)
//			defer client.Close()
//			return m.Run()
//		})
//	}
//
// A test that needs a database of its own calls New, which drops it when
// the test ends; code that manages lifetimes itself calls Create and the
// returned drop function.
//
// # Environment
//
//   - VIRTFLOW_TEST_POSTGRES: DSN of a role allowed to CREATE DATABASE
//     (default postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable).
//     Both URL and key=value forms are accepted.
//   - VIRTFLOW_TEST_REDIS: Redis URL for tests (default
//     redis://127.0.0.1:6379/0), returned by RedisURL.
//   - VIRTFLOW_TEST_SKIP_POSTGRES=1: if PostgreSQL cannot be reached, skip
//     the tests that need it instead of failing. Without it an unreachable
//     PostgreSQL fails the package with a message saying how to fix it.
//
// A test binary killed before it can clean up (for example by go test's
// -timeout) leaves its database behind; Main drops vf_test_ databases older
// than StaleAge that nobody is connected to, so these do not pile up.
package testdb
