package canary

import (
	"log/slog"
	"testing"
)

// TestEventLevel: failures and quarantine changes log at WARN, the rest
// at INFO.
func TestEventLevel(t *testing.T) {
	for k, want := range map[EventKind]slog.Level{
		EventFailure: slog.LevelWarn, EventQuarantined: slog.LevelWarn, EventRecovered: slog.LevelWarn,
		EventEnrolled: slog.LevelInfo, EventReenrolled: slog.LevelInfo,
	} {
		if got := k.Level(); got != want {
			t.Errorf("%s.Level() = %v, want %v", k, got, want)
		}
	}
}
