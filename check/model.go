package check

import (
	"slices"

	"github.com/custody-gateway/custody"
)

// Model fails when the response's model is not one the route accepts, or,
// when pinned, is not exactly the route's model: a silent substitution
// behind a router, or an alias that moved to a new snapshot.
func Model(responseModel string, accept []string, routeModel string, pinned bool) error {
	if responseModel == "" {
		return custody.Errorf(custody.CodeModelMismatch, "the upstream response names no model")
	}
	if pinned && responseModel != routeModel {
		return custody.Errorf(custody.CodeModelMismatch,
			"the policy pins %q; the upstream answered with %q", routeModel, responseModel)
	}
	if !slices.Contains(accept, responseModel) {
		return custody.Errorf(custody.CodeModelMismatch,
			"the upstream answered with %q, which this route does not accept", responseModel)
	}
	return nil
}
