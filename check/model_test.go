package check

import (
	"testing"

	"github.com/custody-gateway/custody"
)

func TestModel(t *testing.T) {
	accept := []string{"glm-0827", "glm-0827-fp8"}
	for _, tc := range []struct {
		name, got string
		pinned    bool
		want      custody.Code
	}{
		{"accepted", "glm-0827", false, ""},
		{"accepted alternative", "glm-0827-fp8", false, ""},
		{"silent fallback", "other-model", false, custody.CodeModelMismatch},
		{"snapshot drift", "glm-0901", false, custody.CodeModelMismatch},
		{"pinned rejects accepted alias", "glm-0827-fp8", true, custody.CodeModelMismatch},
		{"pinned exact", "glm-0827", true, ""},
		{"missing model", "", false, custody.CodeModelMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, Model(tc.got, accept, "glm-0827", tc.pinned), tc.want) })
	}
}

func TestRequestID(t *testing.T) {
	for _, tc := range []struct {
		name, sent, echoed string
		want               custody.Code
	}{
		{"echoed", "r1", "r1", ""},
		{"other request", "r1", "r0", custody.CodeRequestIDMismatch},
		{"missing", "r1", "", custody.CodeRequestIDMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) { wantCode(t, RequestID(tc.sent, tc.echoed), tc.want) })
	}
}
