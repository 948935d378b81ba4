package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/config"
)

func TestNext(t *testing.T) {
	allow := &config.Policy{Name: "open", Fallback: "allow"}
	deny := &config.Policy{Name: "strict", Fallback: "deny"}
	eu := &config.Policy{Name: "eu", Fallback: "allow", Regions: []string{"eu"}}
	euDeny := &config.Policy{Name: "eu-strict", Fallback: "deny", Regions: []string{"eu"}}
	two := []Route{{Provider: "a", Region: "eu"}, {Provider: "b", Region: "eu"}}
	usFirst := []Route{{Provider: "us", Region: "us"}, {Provider: "a", Region: "eu"}, {Provider: "b", Region: "eu"}}
	euThenUS := []Route{{Provider: "a", Region: "eu"}, {Provider: "us", Region: "us"}}
	quarantinedFirst := []Route{{Provider: "a", Quarantined: true}, {Provider: "b"}}
	down := custody.Errorf(custody.CodeUpstreamUnavailable, "provider a answered HTTP 503")
	down2 := custody.Errorf(custody.CodeUpstreamUnavailable, "provider b answered HTTP 503")
	quarantined := custody.Errorf(custody.CodeRouteQuarantined, "route a is quarantined")
	tooLong := &custody.Error{Code: custody.CodeContextLengthExceeded, HTTPStatus: 400, Message: "too long"}
	for _, tc := range []struct {
		name     string
		p        *config.Policy
		routes   []Route
		failures []error
		route    int
		skip     Skip
		fallback bool
		code     custody.Code // of Err when route is -1
		err      error        // Err itself, when it is a failure passed on
		message  string       // in Err's message
	}{
		{"primary", allow, two, nil, 0, SkipNone, false, "", nil, ""},
		{"fallback allowed", allow, two, []error{down}, 1, SkipNone, true, "", nil, ""},
		{"every route failed", allow, two, []error{down, down2}, -1, SkipNone, false, custody.CodeUpstreamUnavailable, down2, ""},
		{"fallback denied", deny, two, []error{down}, -1, SkipNone, false, custody.CodeFallbackNotPermitted, nil,
			"policy strict forbids fallback; the primary route (a) failed: provider a answered HTTP 503"},
		{"denied, quarantined primary", deny, two, []error{quarantined}, -1, SkipNone, false, custody.CodeRouteQuarantined, quarantined, ""},
		{"denied, prompt too long", deny, two, []error{tooLong}, -1, SkipNone, false, custody.CodeContextLengthExceeded, tooLong, ""},
		{"region skips the first route", eu, usFirst, nil, 1, SkipNone, false, "", nil, ""},
		{"region: the second eligible is a fallback", eu, usFirst, []error{down}, 2, SkipNone, true, "", nil, ""},
		{"region excludes the rest", euDeny, euThenUS, []error{down}, -1, SkipNone, false, custody.CodeFallbackNotPermitted, nil,
			"policy eu-strict permits no other route; the primary route (a) failed"},
		{"region excludes the rest, allow", eu, euThenUS, []error{down}, -1, SkipNone, false, custody.CodeFallbackNotPermitted, nil, "permits no other route"},
		{"region excludes the rest, too long", eu, euThenUS, []error{tooLong}, -1, SkipNone, false, custody.CodeContextLengthExceeded, tooLong, ""},
		{"no eligible route", eu, []Route{{Provider: "us", Region: "us"}}, nil, -1, SkipNone, false, custody.CodeFallbackNotPermitted, nil,
			"policy eu permits none of the routes of model m"},
		{"quarantined primary is taken, skipped", allow, quarantinedFirst, nil, 0, SkipQuarantined, false, "", nil, ""},
		{"past a quarantined primary", allow, quarantinedFirst, []error{quarantined}, 1, SkipNone, true, "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Next(tc.p, "m", tc.routes, tc.failures)
			if s.Route != tc.route || s.Skip != tc.skip || s.Fallback != tc.fallback {
				t.Fatalf("Next = %+v, want route %d skip %q fallback %v", s, tc.route, tc.skip, tc.fallback)
			}
			if tc.route >= 0 {
				if s.Err != nil {
					t.Errorf("a route and an error: %v", s.Err)
				}
				return
			}
			if got := custody.CodeOf(s.Err); got != tc.code {
				t.Errorf("code %s, want %s (%v)", got, tc.code, s.Err)
			}
			if tc.err != nil && s.Err != tc.err {
				t.Errorf("Err %v, want the failure itself", s.Err)
			}
			var e *custody.Error
			if tc.message != "" && (!errors.As(s.Err, &e) || !strings.Contains(e.Message, tc.message)) {
				t.Errorf("message %q, want %q in it", s.Err, tc.message)
			}
		})
	}
}
