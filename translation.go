package custody

import "strings"

// Translated lists the request members a translation to chat carried as
// something else, proved no-ops, or ignored, by name (never their
// values): the detail of a CheckTranslation outcome.
type Translated struct {
	noop, carried, ignored []string
}

// NoOp records a member proved a no-op.
func (n *Translated) NoOp(name string) { n.noop = append(n.noop, name) }

// Carry records a member carried as something else.
func (n *Translated) Carry(name string) { n.carried = append(n.carried, name) }

// Ignore records a member that changes nothing the model computes,
// which the translation does not honour.
func (n *Translated) Ignore(name string) { n.ignored = append(n.ignored, name) }

// String is "no-op:a,b carried:c ignored:d", the empty lists left out.
func (n *Translated) String() string {
	var parts []string
	for _, l := range []struct {
		label string
		names []string
	}{{"no-op", n.noop}, {"carried", n.carried}, {"ignored", n.ignored}} {
		if len(l.names) > 0 {
			parts = append(parts, l.label+":"+strings.Join(l.names, ","))
		}
	}
	return strings.Join(parts, " ")
}
