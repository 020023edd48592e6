package cli

import (
	"context"
	"fmt"
	"time"
)

// awaitInterval is how often --wait reads a record again.
const awaitInterval = 500 * time.Millisecond

// await is --wait for a record with a status: it returns cur once its status is want, an
// error naming what and the reason once it is failed, when reload says the record is gone,
// or when timeout passed; otherwise it reads the record again (reload) every awaitInterval.
// status gives a record's status and reason.
func await[T any, S ~string](ctx context.Context, timeout time.Duration, what string, cur T,
	status func(T) (S, *string), want, failed S, reload func(context.Context) (T, bool, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		s, why := status(cur)
		switch s {
		case want:
			return cur, nil
		case failed:
			return cur, fmt.Errorf("%s is in %s: %s", what, s, deref(why))
		}
		select {
		case <-ctx.Done():
			return cur, fmt.Errorf("%s still %s after %v", what, s, timeout)
		case <-time.After(awaitInterval):
		}
		next, ok, err := reload(ctx)
		if err != nil {
			return cur, err
		}
		if !ok {
			return cur, fmt.Errorf("%s is gone", what)
		}
		cur = next
	}
}
