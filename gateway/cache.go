package gateway

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/custody-gateway/custody/openai"
)

// Prompt-cache isolation (providers[].cache_isolation). custody sets the
// cache salt itself, over any the client sent: a salt a client chooses
// can be copied from a victim. The salt is a MAC of the tenant (and use
// case) under a key made at each start and held in memory only, so that
// an engine's cache from before a restart or a reload is unreachable: no
// tenant can then have cached anything this gateway does not know of,
// which is what the per-request check needs to be sound. The cost is the
// cache hits lost across restarts (and between replicas, whose keys
// differ).

// cacheAllowanceUntemplated is what an upstream's rendering may add, in
// tokens, to the prompt text the cache check hashes where custody does
// not render the prompt (a template's system turn and tool
// instructions); cacheBlock is an engine cache's block.
const (
	cacheAllowanceUntemplated = 512
	cacheBlock                = 16
)

// cacheMembers are the members the attempt sets for the route's
// provider, and the history key of the tenant's cache ("" if none).
func (x *exchange) cacheMembers(rt route) ([]openai.Member, string) {
	if !x.wire.Traits().PromptCache {
		return nil, ""
	}
	switch rt.prov.CacheIsolation {
	case "tenant", "tenant_use_case":
		subject := x.tx.Tenant
		if rt.prov.CacheIsolation == "tenant_use_case" {
			subject += "\x00" + x.tx.UseCase
		}
		mac := hmac.New(sha256.New, x.g.cacheKey[:])
		mac.Write([]byte(subject))
		salt := "custody-" + hex.EncodeToString(mac.Sum(nil)[:16])
		q, _ := json.Marshal(salt)
		key := rt.prov.Name + "\x00" + salt
		// Sent, so cacheable: from now on it bounds the others.
		x.g.cacheHist.Remember(key, x.prompt.text)
		return []openai.Member{{Name: "cache_salt", Value: q}}, key
	case "disable":
		return []openai.Member{{Name: "cache_prompt", Value: []byte("false")}}, ""
	}
	return nil, ""
}
