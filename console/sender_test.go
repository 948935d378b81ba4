package console

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/custody-gateway/custody"
	"github.com/custody-gateway/custody/index"
)

// TestRecordShowsSender: a record's page says who sent it: a client's
// nothing, a canary probe's "(canary)", an eval case's "(eval)", each
// found by its sender in the index; the admin API's records take the
// sender as a filter and refuse an unknown one; the overview and the
// breakdowns count the eval apart from the canary probes.
func TestRecordShowsSender(t *testing.T) {
	e := newEnv(t, false)
	route := e.gw.Routes()[0]
	body, _ := json.Marshal(map[string]any{"model": route.Model(), "messages": []any{map[string]any{"role": "user", "content": "an eval case"}}})
	if _, err := route.Eval(context.Background(), body); err != nil {
		t.Fatal(err)
	}
	find := func(o custody.Sender) string {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			recs, err := e.idx.Search(context.Background(), index.Query{Sender: o, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) == 1 {
				return recs[0].ID
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s record in the index", o)
			}
		}
	}
	evalID := find(custody.SenderEval)
	for _, c := range []struct {
		query  string
		status int
		want   string
	}{
		{"sender=eval", 200, `"sender":"eval"`},
		{"sender=client", 200, `"id":"` + e.ids.verified + `"`},
		{"sender=cron", 400, `"param":"sender"`},
	} {
		resp, b := e.do("GET", "/v1/custody/records?"+c.query, adminKey, nil)
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
			t.Errorf("records?%s: %d, lacks %s: %.300s", c.query, resp.StatusCode, c.want, b)
		}
		if c.query == "sender=eval" && (strings.Contains(string(b), `"sender":"canary"`) || !strings.Contains(string(b), evalID)) {
			t.Errorf("records?sender=eval: %.300s", b)
		}
	}
	op := e.operator()
	op.login()
	for _, c := range []struct {
		sender custody.Sender
		id     string
		want   string
	}{
		{custody.SenderClient, e.ids.verified, "chat.completions</td>"},
		{custody.SenderCanary, find(custody.SenderCanary), "chat.completions (canary)</td>"},
		{custody.SenderEval, find(custody.SenderEval), "chat.completions (eval)</td>"},
	} {
		resp, page := op.get("/ui/record?id=" + c.id)
		if resp.StatusCode != 200 || !strings.Contains(page, c.want) {
			t.Errorf("%s record %s: %d, page lacks %q", c.sender, c.id, resp.StatusCode, c.want)
		}
	}
	_, overview := op.get("/ui/?window=1h")
	if !strings.Contains(overview, `id="eval-total">1</strong> eval transactions`) {
		t.Errorf("the overview does not count the one eval transaction apart")
	}
	_, byTenant := op.get("/ui/breakdowns?by=tenant&window=1h")
	if !strings.Contains(byTenant, `<td class="evals">1</td>`) {
		t.Errorf("the breakdown by tenant does not count the one eval transaction apart")
	}
}
