// Package testlog gives a test a logger for the processes it runs in-process (server,
// worker, agents) that stays quiet while the test passes and prints what they logged at
// WARN and above when it fails: an INTERNAL answer then comes with the error behind its
// request id instead of being lost to io.Discard.
package testlog

import (
	"bytes"
	"log/slog"
	"sync"
	"testing"
)

// maxBytes bounds what one test keeps: the last half is what explains a failure.
const maxBytes = 256 << 10

// buffer is a bounded, concurrency-safe log sink.
type buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len()+len(p) > maxBytes {
		keep := b.buf.Bytes()[b.buf.Len()/2:]
		rest := append([]byte("…(earlier lines dropped)\n"), keep...)
		b.buf.Reset()
		b.buf.Write(rest)
	}
	return b.buf.Write(p)
}

func (b *buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// OnFailure returns a logger whose WARN and ERROR records are shown in t's output if t
// fails, and dropped otherwise.
func OnFailure(t testing.TB) *slog.Logger {
	t.Helper()
	b := &buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			if s := b.String(); s != "" {
				t.Logf("what the in-process services logged at WARN and above:\n%s", s)
			}
		}
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
