package worker

import (
	"net/http"

	"github.com/hibiken/asynq"
	"github.com/hibiken/asynqmon"

	"github.com/virtflow/virtflow/authz"
)

// MonitorPath is where the Asynq web UI (asynqmon) is mounted.
const MonitorPath = "/asynqmon"

// Monitor returns asynqmon, Asynq's web UI over the queues in redis, mounted at
// MonitorPath, for platform admins only: authenticate puts the viewer of the request's
// Bearer token into its context (identity.Service.Middleware); anyone but an admin with a
// read-write token gets 401 or 403.
func Monitor(redis asynq.RedisConnOpt, authenticate func(http.Handler) http.Handler) http.Handler {
	mon := asynqmon.New(asynqmon.Options{RootPath: MonitorPath, RedisConnOpt: redis})
	return authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := authz.FromContext(r.Context())
		switch {
		case v == nil:
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "sign in: send Authorization: Bearer <token>", http.StatusUnauthorized)
		case v.ReadOnly || !v.HasRole(authz.RoleAdmin):
			http.Error(w, "the task queue monitor is for platform admins", http.StatusForbidden)
		default:
			mon.ServeHTTP(w, r)
		}
	}))
}
