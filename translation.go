package custody

import "strings"

// Translated lists the request members a translation to chat carried as
// something else (or applied itself) or proved no-ops, by name (never
// their values): the detail of a CheckTranslation outcome. A member a
// translation would neither carry nor prove a no-op is refused, never
// listed: nothing is ignored.
type Translated struct {
	noop, carried []string
}

// NoOp records a member proved a no-op.
func (n *Translated) NoOp(name string) { n.noop = append(n.noop, name) }

// Carry records a member carried as something else, or applied by the
// translation itself.
func (n *Translated) Carry(name string) { n.carried = append(n.carried, name) }

// String is "no-op:a,b carried:c", the empty lists left out.
func (n *Translated) String() string {
	var parts []string
	for _, l := range []struct {
		label string
		names []string
	}{{"no-op", n.noop}, {"carried", n.carried}} {
		if len(l.names) > 0 {
			parts = append(parts, l.label+":"+strings.Join(l.names, ","))
		}
	}
	return strings.Join(parts, " ")
}
