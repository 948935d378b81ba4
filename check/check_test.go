package check

import (
	"errors"
	"testing"

	"github.com/custody-gateway/custody"
)

// wantCode asserts err carries code (or is nil when code is "").
func wantCode(t *testing.T, err error, code custody.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected failure: %v", err)
		}
		return
	}
	var e *custody.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}
