package policy

import "testing"

func TestContractRejects(t *testing.T) {
	for _, tc := range []struct {
		on    string
		stack bool
		want  bool
	}{
		{"default", true, true}, {"default", false, false}, {"", true, true}, {"", false, false},
		{"reject", false, true}, {"reject", true, true}, {"flag", true, false}, {"flag", false, false},
	} {
		if got := ContractRejects(tc.on, tc.stack); got != tc.want {
			t.Errorf("ContractRejects(%q, %v) = %v, want %v", tc.on, tc.stack, got, tc.want)
		}
	}
}
