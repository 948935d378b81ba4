package eval

import (
	"fmt"
	"slices"
	"strings"
)

// ContractTally is a run's answers as the contract check judged them
// (issue 30: "eval suites can require a rate"): a suite with
// contract_pass_rate fails a run whose answers honour their requests
// (tools, schemas, tool_choice, formats, limits) less often than that,
// whatever its cases' assertions say.
type ContractTally struct {
	Required float64 // the suite's contract_pass_rate; 0: none
	Checked  int     // answers the check judged
	Passed   int
	// Broken counts the broken answers by code, one code per clause.
	Broken map[string]int
}

// Rate is Passed / Checked; 1 when nothing was judged.
func (c ContractTally) Rate() float64 {
	if c.Checked == 0 {
		return 1
	}
	return float64(c.Passed) / float64(c.Checked)
}

// BrokenList is Broken as "code=n", most first (ties by code).
func (c ContractTally) BrokenList() []string {
	codes := make([]string, 0, len(c.Broken))
	for k := range c.Broken {
		codes = append(codes, k)
	}
	slices.SortFunc(codes, func(a, b string) int {
		if c.Broken[a] != c.Broken[b] {
			return c.Broken[b] - c.Broken[a]
		}
		return strings.Compare(a, b)
	})
	for i, k := range codes {
		codes[i] = fmt.Sprintf("%s=%d", k, c.Broken[k])
	}
	return codes
}

// tallyContract counts the run's answers the contract check judged.
func (rep *Report) tallyContract(required float64) {
	t := ContractTally{Required: required, Broken: map[string]int{}}
	for _, c := range rep.Cases {
		switch c.Contract {
		case "":
		case "ok":
			t.Checked++
			t.Passed++
		default:
			t.Checked++
			t.Broken[c.Contract]++
		}
	}
	rep.Contract = t
}

// ContractReason says why the run's answers fall short of the suite's
// contract pass rate, naming the codes of the broken clauses; "" when
// they do not (or the suite requires none). A run none of whose answers
// the check judged falls short: nothing showed the rate.
func (rep *Report) ContractReason() string {
	c := rep.Contract
	if c.Required <= 0 {
		return ""
	}
	if c.Checked == 0 {
		return fmt.Sprintf("contract pass rate required %g, but no answer was held to a contract", c.Required)
	}
	if float64(c.Passed) >= c.Required*float64(c.Checked)-1e-9 {
		return ""
	}
	return fmt.Sprintf("contract pass rate %.2f (%d/%d) below %g: broken %s", c.Rate(), c.Passed, c.Checked, c.Required,
		strings.Join(c.BrokenList(), ", "))
}
