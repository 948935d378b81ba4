package policy

// ContractRejects decides what a broken clause of the contract check
// does under a policy's on_contract: reject and flag decide every clause;
// default rejects what only a broken serving stack produces (stack) and
// flags what a model can get wrong on its own.
func ContractRejects(onContract string, stack bool) bool {
	switch onContract {
	case "reject":
		return true
	case "flag":
		return false
	}
	return stack
}
