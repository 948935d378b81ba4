package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/custody-gateway/custody"
)

func seeds(f *testing.F, dir string) {
	files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s", dir)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// FuzzParseRequest: any body parses or is refused with invalid_request;
// what parses translates to chat JSON or is refused naming a param.
func FuzzParseRequest(f *testing.F) {
	seeds(f, "requests")
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := ParseRequest(body)
		if err != nil {
			var e *custody.Error
			if !errors.As(err, &e) || e.Code != custody.CodeInvalidRequest {
				t.Fatalf("error %v is not invalid_request", err)
			}
			return
		}
		out, err := r.ToChat()
		if err != nil {
			var e *custody.Error
			if !errors.As(err, &e) || e.Code != custody.CodeInvalidRequest || e.Param == "" {
				t.Fatalf("translation error %v names no param", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("translation is not JSON: %s", out)
		}
	})
}

// FuzzStream: any lines are validated as events, read as Responses and
// translated as chat chunks without a panic.
func FuzzStream(f *testing.F) {
	seeds(f, "streams")
	r, err := ParseRequest([]byte(`{"model":"m","input":"hi","stream":true}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, transcript []byte) {
		var v StreamValidator
		tr := r.NewStreamTranslator(1)
		for _, line := range bytes.Split(transcript, []byte("\n")) {
			_ = v.Event(line)
			_, _ = tr.Chunk(line)
			if rr, err := ParseResponse(line); err == nil {
				_ = rr.Failure()
			}
			_, _ = r.FromChat(line, 1)
		}
		_ = v.End()
		_, _ = tr.End()
	})
}
