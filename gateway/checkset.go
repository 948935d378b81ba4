package gateway

// checkSet is the response checks a gateway runs (Options.Checks); nil
// runs every one.
type checkSet map[string]bool

func newCheckSet(names []string) checkSet {
	if names == nil {
		return nil
	}
	s := checkSet{}
	for _, n := range names {
		s[n] = true
	}
	return s
}

func (s checkSet) runs(check string) bool { return s == nil || s[check] }

// none reports whether no check runs: the upstream's answer need not
// even be read.
func (s checkSet) none() bool { return s != nil && len(s) == 0 }
